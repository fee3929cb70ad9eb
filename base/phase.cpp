#include "base/phase.h"

#include <time.h>

#include <array>
#include <cstring>

#include "base/clock.h"

namespace base::phase {

namespace {

struct Phase {
  const char* name = nullptr;
  long ns = 0;
};

struct Clock {
  bool on = false;
  const char* current = nullptr;
  long since = 0;
  std::array<Phase, 32> phases{};
};
Clock g;

long CpuNs() {
  const timespec t = ReadClock(CLOCK_PROCESS_CPUTIME_ID);
  return t.tv_sec * 1'000'000'000L + t.tv_nsec;
}

void Add(const char* name, long ns) {
  for (Phase& p : g.phases) {
    if (p.name == nullptr) p.name = name;
    if (p.name == name || std::strcmp(p.name, name) == 0) {
      p.ns += ns;
      break;
    }
  }
}

// Closes the running phase at `now` and makes `next` the running one.
void Switch(const char* next) {
  const long now = CpuNs();
  Add(g.current, now - g.since);
  g.current = next;
  g.since = now;
}

}  // namespace

bool Enabled() { return g.on; }

void Enable() {
  g.on = true;
  g.current = "start-up";
  g.since = 0;  // the process's CPU clock starts at its exec
}

void Begin(const char* name) {
  if (g.on) Switch(name);
}

Scope::Scope(const char* name) {
  if (!g.on || g.current == name) return;
  resume_ = g.current;
  Switch(name);
}

Scope::~Scope() {
  if (resume_ != nullptr) Switch(resume_);
}

void Charge(const char* name, long ns) {
  if (g.on) Add(name, ns);
}

std::string Report() {
  if (!g.on) return "";
  Switch(g.current);
  std::string out(kReportHead);
  for (const Phase& p : g.phases) {
    if (p.name == nullptr) break;
    out += " " + std::string(p.name) + "=" + std::to_string(p.ns / 1000);
  }
  return out + "\n";
}

}  // namespace base::phase

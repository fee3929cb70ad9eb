// base::phase: the CPU-by-phase account erdma-cni prints with
// ERDMA_CNI_PHASES (the benchmark's --phases table reads it).
#include "base/phase.h"

#include <catch2/catch.hpp>
#include <ctime>
#include <map>
#include <sstream>
#include <string>

namespace test_unit_phase_test {

namespace {

// "erdma-cni phases (CPU us): a=1 b=2\n" -> {a: 1, b: 2}; throws on a bad item.
std::map<std::string, long> Parse(const std::string& line) {
  const std::string head = "erdma-cni phases (CPU us):";
  REQUIRE(line.rfind(head, 0) == 0);
  REQUIRE(line.back() == '\n');
  std::istringstream in(line.substr(head.size()));
  std::map<std::string, long> out;
  std::string item;
  while (in >> item) {
    const size_t eq = item.find('=');
    REQUIRE(eq != std::string::npos);
    INFO(item);
    CHECK(out.count(item.substr(0, eq)) == 0);  // each name once
    out[item.substr(0, eq)] = std::stol(item.substr(eq + 1));
  }
  return out;
}

// Keeps the CPU busy for about `ms` milliseconds of CPU time.
void Spin(double ms) {
  timespec t0{}, t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  do {
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

}  // namespace

TEST_CASE("phases: a name twice adds up, a Scope is its own phase, a child's CPU is charged apart") {
  // Before Enable nothing is counted (the test process's other tests ran
  // with it off, as a plugin without the variable does).
  CHECK(base::phase::Report().empty());
  base::phase::Enable();
  REQUIRE(base::phase::Enabled());
  base::phase::Begin("alpha");
  Spin(2);
  {
    const base::phase::Scope inner("beta");
    Spin(3);
    const base::phase::Scope same("beta");  // nested under its own name: one phase
    Spin(1);
  }
  Spin(2);  // alpha again
  base::phase::Begin("gamma");
  Spin(1);
  base::phase::Begin("alpha");
  Spin(1);
  // A child's CPU, charged twice, is its own phase and not the running one's.
  base::phase::Charge("child", 4'000'000);
  base::phase::Charge("child", 3'000'000);
  const auto phases = Parse(base::phase::Report());
  REQUIRE(phases.count("start-up") == 1);
  REQUIRE(phases.count("alpha") == 1);
  REQUIRE(phases.count("beta") == 1);
  REQUIRE(phases.count("gamma") == 1);
  REQUIRE(phases.count("child") == 1);
  CHECK(phases.size() == 5);
  CHECK(phases.at("child") == 7000);
  // CPU time spun, in microseconds: alpha 2+2+1 ms, beta 3+1, gamma 1 (the
  // clock's own reads add a little).
  CHECK(phases.at("alpha") >= 5000);
  CHECK(phases.at("alpha") < 5000 + 2000);
  CHECK(phases.at("beta") >= 4000);
  CHECK(phases.at("beta") < 4000 + 2000);
  CHECK(phases.at("gamma") >= 1000);
  CHECK(phases.at("gamma") < 1000 + 2000);
}

}  // namespace test_unit_phase_test

// Where an invocation's CPU time goes, phase by phase, with ERDMA_CNI_PHASES set (docs/performance.md). A
// phase named twice adds up; a Scope's time counts to its own name, not to the phase running around it; the
// exit is not counted. Without the variable, Begin and Scope test one flag.
#pragma once

#include <string>
#include <string_view>

namespace base::phase {

/// Whether ERDMA_CNI_PHASES was set when main called Enable.
bool Enabled();
/// Starts counting (the CPU time so far is "start-up"); main calls it when the variable is set.
void Enable();
/// The time from now to the next Begin (or a Scope) counts to `name` (a
/// string literal: names are kept by pointer).
void Begin(const char* name);

/// The time inside counts to `name`; the phase running before resumes.
class Scope {
 public:
  explicit Scope(const char* name);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* resume_ = nullptr;
};

/// Adds `ns` of CPU spent outside this process (a child's, from wait4) to
/// `name` (a string literal), which is not the running phase's clock.
void Charge(const char* name, long ns);

/// How the report line starts (the benchmark finds it on stderr by it).
inline constexpr std::string_view kReportHead = "erdma-cni phases (CPU us):";

/// kReportHead, then " name=us" per phase and "\n", the running phase closed now; empty when not enabled.
std::string Report();

}  // namespace base::phase

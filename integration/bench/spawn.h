// Running a plugin the way a container runtime does: fork, exec with the CNI_*
// environment and the config on stdin, wait. Wall time is taken around
// fork..wait4; CPU (user+sys) and peak RSS come from wait4's rusage of the
// child.
#pragma once

#include <string>
#include <vector>

namespace bench {

struct Invocation {
  std::vector<std::string> argv;  ///< argv[0] is an absolute path
  std::vector<std::string> env;   ///< the whole environment, "K=V"
  std::string stdin_text;
};

struct Outcome {
  int exit = -1;  ///< exit status; -1 when killed by a signal
  double wall_ms = 0;
  double cpu_ms = 0;     ///< ru_utime + ru_stime
  long maxrss_kib = 0;   ///< ru_maxrss
  std::string out, err;  ///< captured stdout and stderr
};

/// Runs one invocation to completion.
Outcome Spawn(const Invocation& inv);

/// Starts all invocations at once (fork them back to back), then waits for
/// all. `total_wall_ms` is from the first fork to the last exit.
std::vector<Outcome> SpawnAll(const std::vector<Invocation>& invs, double* total_wall_ms);

/// Monotonic clock in milliseconds.
double NowMs();
/// CPU time (user+sys) of the calling thread in milliseconds.
double ThreadCpuMs();
/// VmRSS / RssAnon of this process in KiB (from /proc/self/status).
long SelfStatusKib(const char* field);

}  // namespace bench

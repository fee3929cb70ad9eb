// The clocks the plugin reads, by system call rather than through the vDSO.
#pragma once

#include <time.h>

#include <chrono>

namespace base {

/// clock_gettime(2) of `id` as a system call (docs/decisions/first-touched-pages.md).
timespec ReadClock(clockid_t id);

/// std::chrono::steady_clock read by ReadClock(CLOCK_MONOTONIC). Its
/// time_point is steady_clock's: deadlines of both compare.
struct SteadyClock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr bool is_steady = true;  // NOLINT(readability-identifier-naming): the Clock requirement
  static time_point now() noexcept;
};

/// Whole milliseconds until `deadline`, rounded up (a poll(2) given them does not wake before it), 0 once it
/// has passed; at most INT_MAX.
int MillisLeft(SteadyClock::time_point deadline);

}  // namespace base

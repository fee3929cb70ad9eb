#include "base/clock.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace base {

timespec ReadClock(clockid_t id) {
  timespec ts{};
  ::syscall(SYS_clock_gettime, id, &ts);
  return ts;
}

SteadyClock::time_point SteadyClock::now() noexcept {
  const timespec ts = ReadClock(CLOCK_MONOTONIC);
  return time_point(std::chrono::duration_cast<duration>(std::chrono::seconds(ts.tv_sec) +
                                                         std::chrono::nanoseconds(ts.tv_nsec)));
}

int MillisLeft(SteadyClock::time_point deadline) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(deadline - SteadyClock::now()).count();
  return us <= 0 ? 0 : static_cast<int>(std::min<long long>((us + 999) / 1000, INT_MAX));
}

}  // namespace base

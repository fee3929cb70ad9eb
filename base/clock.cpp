#include "base/clock.h"

#include <sys/syscall.h>
#include <unistd.h>

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

}  // namespace base

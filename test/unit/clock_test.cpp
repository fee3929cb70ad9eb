// base/clock.h: the clocks read by system call are the clocks the C library
// reads, so deadlines and timestamps mix with std::chrono's.
#include "base/clock.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <climits>

namespace test_unit_clock_test {

using namespace std::chrono_literals;

TEST_CASE("SteadyClock reads steady_clock's clock, and never goes back", "[clock]") {
  const auto before = std::chrono::steady_clock::now();
  const auto ours = base::SteadyClock::now();
  const auto after = std::chrono::steady_clock::now();
  CHECK(before <= ours);
  CHECK(ours <= after);
  auto last = ours;
  for (int i = 0; i < 1000; ++i) {
    const auto now = base::SteadyClock::now();
    REQUIRE(now >= last);
    last = now;
  }
}

TEST_CASE("ReadClock(CLOCK_REALTIME) is the wall clock system_clock reads", "[clock]") {
  const auto before = std::chrono::system_clock::now();
  const timespec ts = base::ReadClock(CLOCK_REALTIME);
  const auto after = std::chrono::system_clock::now();
  const auto ours =
      std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
  CHECK(before <= ours);
  CHECK(ours <= after);
  CHECK(after - before < 1s);
}

TEST_CASE("MillisLeft rounds up to the deadline and is 0 once it has passed", "[clock]") {
  const auto now = base::SteadyClock::now();
  CHECK(base::MillisLeft(now - 1ms) == 0);
  // Rounded up: a wait of the answer, started after asking, never ends before the deadline.
  for (int i = 0; i < 100; ++i) {
    const auto deadline = base::SteadyClock::now() + 2ms + std::chrono::microseconds(i * 9);
    const int left = base::MillisLeft(deadline);
    CHECK(base::SteadyClock::now() + std::chrono::milliseconds(left) >= deadline);
    CHECK(left <= 3);
  }
  CHECK(base::MillisLeft(base::SteadyClock::now() + 10s) > 9000);
  CHECK(base::MillisLeft(base::SteadyClock::now() + std::chrono::hours(24 * 365 * 100)) == INT_MAX);
}

}  // namespace test_unit_clock_test

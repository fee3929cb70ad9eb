// erdma-bench-idle: a static do-nothing, the benchmark's calibration of what
// an exec-style process costs by itself. With an argument it first blocks
// that many milliseconds, as an ADD or DEL blocks in the kernel while a
// device changes netns (RCU grace periods, 18-33 ms on the benchmark's VMs):
// the calibration tells whether a process that has slept pays more for its exit (docs/performance.md).
#include <time.h>

#include <cstdlib>

int main(int argc, char** argv) {
  if (argc > 1) {
    const long ms = std::atol(argv[1]);
    timespec t{ms / 1000, (ms % 1000) * 1'000'000L};
    while (::nanosleep(&t, &t) != 0) {
    }
  }
  return 0;
}

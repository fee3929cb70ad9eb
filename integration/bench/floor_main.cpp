// erdma-bench-floor: the floor on its own, for profilers. Builds a one-ENI
// topology, enters its node netns and runs N floor ADD+DEL pairs, printing
// the median wall and CPU time of each. Under callgrind, collect only the
// floor with --toggle-collect='bench::FloorAdd*' --toggle-collect='bench::FloorDel*'.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "cni/driver/registry.h"
#include "conf/config.h"
#include "integration/bench/floor.h"
#include "integration/bench/spawn.h"
#include "integration/bench/stats.h"
#include "integration/bench/topology.h"

int main(int argc, char** argv) {
  int iterations = 100;
  bool down_first = false, breakdown = false;
  int gap_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc)
      iterations = std::stoi(argv[++i]);
    else if (a == "--down-first")
      down_first = true;
    else if (a == "--breakdown")
      breakdown = true;
    else if (a == "--gap-ms" && i + 1 < argc)
      gap_ms = std::stoi(argv[++i]);
    else {
      std::cerr << "usage: erdma-bench-floor [--iterations N] [--breakdown] [--down-first]\n"
                   "  --breakdown   median wall time of every rtnetlink verb of ADD and DEL\n"
                   "  --down-first  experiment: set the link down before each move\n"
                   "  --gap-ms N    sleep N ms after each ADD and each DEL (as an exec'd plugin's\n"
                   "                start and exit space the moves out)\n";
      return 2;
    }
  }
  if (geteuid() != 0) {
    std::cerr << "erdma-bench-floor: needs root\n";
    return 2;
  }
  try {
    bench::Topology topo(1, 1);
    pid_t pid = fork();
    if (pid == 0) {
      int rc = 1;
      try {
        bench::EnterNetns(topo.node());
        bench::FloorSpec spec;
        auto cfg = conf::Parse(cni::Modes(), R"({"cniVersion":"1.0.0","name":"bench","type":"erdma-cni",
            "device":{"name":"eth1"},"addresses":"inherit","dataDir":"/nonexistent"})");
        if (!cfg.ok()) throw std::runtime_error(cfg.error().msg);
        spec.cfg = *cfg;
        spec.pod_netns = topo.PodPath(0);
        spec.pod_if = "net1";
        spec.down_before_move = down_first;
        bench::VerbTimes add_times, del_times;
        std::vector<double> aw, ac, dw, dc;
        for (int i = 0; i < iterations; ++i) {
          const double w0 = bench::NowMs(), c0 = bench::ThreadCpuMs();
          spec.times = breakdown ? &add_times : nullptr;
          auto att = bench::FloorAdd(spec);
          const double w1 = bench::NowMs(), c1 = bench::ThreadCpuMs();
          if (!att.ok()) throw std::runtime_error("floor ADD: " + att.error().msg);
          if (gap_ms) usleep(static_cast<useconds_t>(gap_ms) * 1000);
          spec.times = breakdown ? &del_times : nullptr;
          const double w1b = bench::NowMs(), c1b = bench::ThreadCpuMs();
          auto del = bench::FloorDel(spec, *att);
          const double w2 = bench::NowMs(), c2 = bench::ThreadCpuMs();
          if (!del.ok()) throw std::runtime_error("floor DEL: " + del.error().msg);
          aw.push_back(w1 - w0), ac.push_back(c1 - c0), dw.push_back(w2 - w1b), dc.push_back(c2 - c1b);
          if (gap_ms) usleep(static_cast<useconds_t>(gap_ms) * 1000);
        }
        std::printf("floor ADD: wall %.2f ms, CPU %.3f ms (medians of %d)\n", bench::Summarize(aw).median,
                    bench::Summarize(ac).median, iterations);
        std::printf("floor DEL: wall %.2f ms, CPU %.3f ms\n", bench::Summarize(dw).median,
                    bench::Summarize(dc).median);
        for (const auto& [what, times] : {std::pair<const char*, bench::VerbTimes*>{"ADD", &add_times},
                                          std::pair<const char*, bench::VerbTimes*>{"DEL", &del_times}}) {
          if (times->empty()) continue;
          std::printf("%s verbs (calls per %s, median ms per call):\n", what, what);
          for (const auto& [verb, v] : *times)
            std::printf("  %-24s %4.1f x %7.3f  (min %.3f, p95 %.3f, max %.3f)\n", verb.c_str(),
                        static_cast<double>(v.size()) / iterations, bench::Summarize(v).median,
                        bench::Summarize(v).min, bench::Summarize(v).p95, bench::Summarize(v).max);
        }
        rc = 0;
      } catch (const std::exception& e) {
        std::cerr << "erdma-bench-floor: " << e.what() << "\n";
      }
      std::fflush(stdout);
      _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    topo.Teardown();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  } catch (const std::exception& e) {
    std::cerr << "erdma-bench-floor: " << e.what() << "\n";
    return 1;
  }
}

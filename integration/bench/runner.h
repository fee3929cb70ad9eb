// The measurements of one benchmark run, made from inside the node netns.
#pragma once

#include <string>
#include <vector>

#include "integration/bench/report.h"
#include "integration/bench/topology.h"

namespace bench {

/// Another build or setup of erdma-cni measured in the same run (ADD and DEL
/// rows of its own, not judged against the targets).
struct Variant {
  std::string label;
  std::string plugin;     ///< binary
  std::string data_root;  ///< parent of its dataDir (as MakeDataDir takes it; default: the main rows')
};

struct Options {
  int iterations = 200;
  int warmup = 10;
  std::vector<int> parallel = {8, 32};
  int parallel_iterations = 5;
  std::string output = "build/bench/results.md";
  std::string plugin;  ///< erdma-cni binary
  std::string data_root =
      "tmpfs";  ///< parent of dataDir (MakeDataDir: "tmpfs" = a private tmpfs, as /run on a node)
  std::vector<Variant> variants;  ///< --variant LABEL=PATH[@DATA_ROOT]
  std::string cni_dir = "/usr/lib/cni";
  std::vector<std::string> only;      ///< empty: every group but scale (floor erdma go none macvlan parallel)
  int scale = 256;                    ///< the scale group's N: attachments on the busy node (--scale)
  std::vector<std::string> profile;   ///< wrapper argv for one erdma-cni ADD and DEL
  std::string profile_mode = "move";  ///< which ADD and DEL --profile wraps: move, none, macvlan
  std::string none_config;            ///< a file with the mode-none config to use instead of ours
  int settle_ms = 10;                 ///< pause before every ADD and DEL (untimed)
  int nice = 0;                       ///< setpriority() of the measuring process and its children
  int mtu = 0;                        ///< > 0: set `mtu` in the config (and the floor)
  bool phases = false;                ///< ERDMA_CNI_PHASES for erdma-cni: its CPU by phase
  bool Wants(const std::string& what) const;
};

/// Runs the measurements (the calling process must already be in topo's node
/// netns). Fills `r`; returns false (after printing why) when a plugin failed.
bool RunMeasurements(const Options& opt, const Topology& topo, Results& r);

/// Runs one erdma-cni ADD and DEL under `opt.profile` (after a few warm-ups),
/// passing its stdout/stderr through. For callgrind, strace and perf.
bool RunProfile(const Options& opt, const Topology& topo);

}  // namespace bench

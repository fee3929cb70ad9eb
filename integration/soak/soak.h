// The soak: many ADD/DEL cycles of the real plugin in one run, modes taking
// turns, with a census of everything a cycle could leave behind taken before
// and after (and every --check-every cycles), and the cycle time distribution.
#pragma once

#include <string>
#include <vector>

#include "integration/bench/topology.h"

namespace soak {

struct Options {
  int cycles = 1000;
  std::vector<std::string> modes;  ///< empty: every mode this kernel has (see ModeNames)
  int check_every = 1000;          ///< full census every N cycles (and at the end)
  int settle_ms = 5000;            ///< how long a census may take to match before it is a leak
  std::string plugin;              ///< erdma-cni binary
  std::string cni_dir = "/usr/lib/cni";
  std::string data_dir;  ///< erdma-cni's dataDir (made by the plugin)
  std::string ipam_dir;  ///< host-local's dataDir
  int parent_pid = 0;  ///< a process in the original mount namespace (private mounts are counted against it)
};

/// Every mode the soak knows: move-inherit, move-ipam, macvlan, ipvlan.
const std::vector<std::string>& ModeNames();

/// Runs the soak; the calling process must already be in topo's node netns
/// (bench::EnterNetns). Prints progress to stderr and the report (markdown)
/// to stdout. 0: every cycle succeeded and nothing leaked; 1 otherwise.
int Run(const Options& opt, const bench::Topology& topo);

/// Proves the census can fail: leaves one of each kind of object behind (an
/// fd, a file in dataDir and in the IPAM dir, a link, an address, a route, a
/// rule, a mount, an orphaned process), checks that the census or the stray
/// count reports it, removes it, checks the census is clean again. 0 when
/// every leak was seen.
int SelfTest(const Options& opt, const bench::Topology& topo);

}  // namespace soak

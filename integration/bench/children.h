// The child-mode group of erdma-bench (`--only macvlan`): erdma-cni mode
// macvlan, the Go macvlan chain and the floor of a macvlan ADD/DEL, on an ENI
// stand-in and a pod of their own.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/bench/floor.h"
#include "integration/bench/report.h"
#include "integration/bench/runner.h"
#include "integration/bench/topology.h"
#include "netlink/rtnl_kernel.h"

namespace bench {

/// One variant's ADD and DEL in one iteration: (iteration, record, verify),
/// false (after printing why) when something failed.
using Unit = std::function<bool(int, bool, bool)>;

/// "<links> links, <rules> rules, <routes> routes" of a pod ("unreadable" when a dump fails).
std::string PodCounts(netlink::Kernel& pod);
/// The names of the node's links, sorted, space separated.
std::string NodeLinks(netlink::Kernel& node);

/// The macvlan rows. Its units refer to it: it must outlive them.
class MacvlanGroup {
 public:
  MacvlanGroup(const Options& opt, const Topology& topo, const std::string& data_dir, Results& r);

  /// Opens the node and pod sockets, records the parent, the node's links and
  /// the pod as they are, and probes erdma-cni's macvlan mode once (a build
  /// without it gets an n/a row). False after printing why.
  bool Prepare();
  /// Appends the floor, erdma-cni and Go chain units.
  void AddUnits(std::vector<Unit>& units);
  /// Whether the parent, the node's links and the pod are as Prepare found
  /// them; prints what differs after `after`.
  bool Check(const std::string& after);

 private:
  bool ErdmaUnit(int it, bool rec, bool verify);
  bool GoUnit(int it, bool rec, bool verify);
  bool FloorUnit(bool rec, bool verify);
  bool StaticUnit(int it, bool rec);
  std::string PodCounts();
  std::string NodeLinks();

  const Options& opt_;
  Results& r_;
  const Eni& parent_;
  const std::string pod_;
  const nlohmann::json ecfg_, gcfg_;
  bool erdma_ = true;  ///< false: the plugin has no macvlan mode
  FloorSpec floor_;
  std::unique_ptr<netlink::Kernel> host_, pod_k_;
  NodeState parent_state_;
  std::string node_links_, pod_counts_;
};

}  // namespace bench

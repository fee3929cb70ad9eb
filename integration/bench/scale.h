// The node-scale group of erdma-bench (`--only scale`): the same
// ADD and DEL on an empty node and on a node where N other pods hold
// attachments made by erdma-cni, a group of 8 rails against one rail, and a
// device taken from a pool against the same device by name.
//
// The busy node: N veth pairs (one end an ENI-like "device" on the node with
// its address and routes, the peer in the vpc netns), each moved into a pod of
// its own by erdma-cni ADD, and N macvlan children of one parent made by
// erdma-cni, each in a pod of its own; all their state in one dataDir (the
// busy one). They are made once before the iterations and removed by Finish
// (erdma-cni DEL, then the pods and the veths).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/bench/calls.h"
#include "integration/bench/children.h"
#include "integration/bench/report.h"
#include "integration/bench/runner.h"
#include "integration/bench/topology.h"
#include "netlink/rtnl_kernel.h"

namespace bench {

/// The scale rows. Its units refer to it: it must outlive them.
class ScaleGroup {
 public:
  /// ENI stand-ins the group takes from the topology, from `first_eni` on: the
  /// move device, the macvlan parent without children, the one with N, and
  /// kRails rails.
  static constexpr int kRails = 8;
  static constexpr int kEnis = 3 + kRails;

  /// `pod`: the index of the topology's pod the measured ADDs go into.
  ScaleGroup(const Options& opt, const Topology& topo, int first_eni, int pod, Results& r);

  /// Opens the node and pod sockets, records the group's devices, the node's
  /// links and the pod as they are, then makes the N busy attachments (timed
  /// into Results). False after printing why (what was made goes with the
  /// namespaces).
  bool Prepare();
  /// Appends one unit per variant.
  void AddUnits(std::vector<Unit>& units);
  /// DELs the busy attachments, removes their pods and veths and checks the
  /// node is as before them. False after printing why.
  bool Finish();

 private:
  struct Variant {
    std::string key;    ///< rows "<key> ADD" and "<key> DEL"
    std::string label;  ///< for messages and --phases
    nlohmann::json config;
  };
  /// A busy attachment: which (the move of sc<i>, or the i-th child) and its
  /// ADD's result as text (the driver's memory is in every fork's copy).
  struct Busy {
    char kind;  ///< 'm' move, 'v' macvlan child
    int i;
    std::string result;
  };

  bool RunVariant(const Variant& v, int it, bool rec, bool verify);
  bool Check(const std::string& after);
  bool MakeBusy();
  std::string PodCounts();
  std::string NodeLinks();
  std::string BusyPod(char kind, int i) const;
  /// The ADD of a busy attachment.
  Call BusyCall(char kind, int i) const;

  const Options& opt_;
  const Topology& topo_;
  Results& r_;
  const int n_;
  const std::string pod_;
  std::vector<Eni> devices_;  ///< move, macvlan parent (0 children), macvlan parent (N), rails
  std::string empty_dir_, busy_dir_;
  std::vector<Variant> variants_;
  std::vector<Busy> busy_;
  std::vector<std::string> busy_pods_;
  bool veths_ = false;  ///< the busy veths exist
  std::unique_ptr<netlink::Kernel> host_, pod_k_;
  std::vector<NodeState> origins_;
  std::string node_links_, pod_counts_;
};

}  // namespace bench

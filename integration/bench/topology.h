// The benchmark's private world, built from the host netns with `ip` and torn
// down at the end; the host's own interfaces are never touched:
//  - node: ENI stand-ins eth1..ethK, veths whose peers sit on a bridge in the
//    vpc netns; ethI has 10.9.0.(10+I)/24 noprefixroute and the node agent's
//    routes `10.9.0.0/24 dev ethI proto static scope link src ... metric
//    200+I-1` and `default via 10.9.0.1 dev ethI metric 200+I-1` (the kernel
//    tests' topology, test/kernel/topology.cpp);
//  - vpc: bridge br0 with the gateway 10.9.0.1;
//  - pod0..podP-1: empty pods (lo up);
//  - tpod: a pod with a Terway-like eth0 (172.16.0.5/24, default via .1),
//    for mode "none".
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "netlink/rtnl_kernel.h"

namespace bench {

struct Eni {
  std::string name;  ///< eth1, eth2, ...
  std::string ip4;   ///< 10.9.0.(10+i)
  uint32_t metric = 0;
};

class Topology {
 public:
  Topology(int enis, int pods);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const std::string& node() const { return node_; }
  const std::string& vpc() const { return vpc_; }
  /// The prefix of every netns name of this run ("ebench-<pid>-"): names made
  /// with it later (by the measuring process) go in Teardown and SweepStale.
  const std::string& prefix() const { return prefix_; }
  std::string PodPath(int i) const { return "/run/netns/" + pods_.at(static_cast<size_t>(i)); }
  std::string TerwayPodPath() const { return "/run/netns/" + tpod_; }
  const Eni& eni(int i) const { return enis_.at(static_cast<size_t>(i - 1)); }
  int enis() const { return static_cast<int>(enis_.size()); }
  int pods() const { return static_cast<int>(pods_.size()); }

  /// Removes the namespaces now, with any other of this run's prefix
  /// (idempotent).
  void Teardown();

 private:
  std::string prefix_, node_, vpc_, tpod_;
  std::vector<std::string> pods_, live_;
  std::vector<Eni> enis_;
};

/// Moves the calling process into `netns` (a name under /run/netns) the way
/// `ip netns exec` does, once: a private mount namespace whose /sys is a
/// fresh sysfs of that netns, so /sys/class/net shows the node's devices.
/// Children inherit it: nothing sits between the driver and the plugin.
void EnterNetns(const std::string& netns);

/// "ERDMA_CNI_NODE_CONFIG=<file>" for the plugin's environment: a node file
/// (docs/security.md), written once per process, named after the process
/// that built the Topology and removed by its Teardown (or at the writer's
/// exit, which the drivers skip with _exit), that
/// allows any dataDir and logFile (the drivers choose them under their data
/// root) and the ENI stand-ins the Topology made (at least eth1..eth9), which
/// carry the private node's only default routes; its podResourcesSocket is
/// KubeletSocketPath().
const std::string& NodeFileEnv();
/// The fake kubelet's socket (kubelet.h), which the node file names.
const std::string& KubeletSocketPath();

/// Runs `/bin/sh -c cmd`; throws with the command on a non-zero exit.
void ShOk(const std::string& cmd);

/// Name, addresses and routes of a node device, as DEL restores them.
struct NodeState {
  netlink::LinkInfo link;
  std::vector<netlink::AddrInfo> addrs;
  std::vector<netlink::RouteInfo> routes;
};
base::Result<NodeState> ReadNodeState(netlink::Kernel& host, const std::string& name);
/// Puts a device back to `want` (up, addresses, routes): the Go chain's DEL
/// returns the device without them. Not timed.
base::Status RestoreNodeState(netlink::Kernel& host, const NodeState& want);
/// Whether `now` matches `want` (ignoring the ifindex).
bool SameNodeState(const NodeState& want, const NodeState& now, std::string* why);

}  // namespace bench

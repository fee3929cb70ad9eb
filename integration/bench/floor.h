// The floor: the rtnetlink work of one erdma-cni ADD and DEL in move mode
// (inherit addresses, policy routes), done in-process with no exec, no JSON
// output, no state file, no claim. It calls the plugin's own library
// (netlink::OpenRtnl, cni::ApplyStep, cni::UndoSteps, the pure planners), so
// it sends exactly the requests the plugin sends, in the same order:
//
// ADD: node socket (+ the NETLINK_RDMA socket attempt), GETLINK by name,
//      GETLINK by index (after the claim), pod netns open + socket, GETLINK
//      of the pod-side name, GETRULE and GETROUTE dumps in the pod (table
//      choice), GETADDR and GETROUTE dumps on the node (the origin), the move
//      (GETLINK, one NEWLINK with IFLA_NET_NS_FD + IFLA_IFNAME, GETLINK in the
//      pod), [MTU], NEWADDR, up, NEWROUTE x3, NEWRULE, GETLINK for the result.
// DEL: node socket, pod netns open + socket, DELRULE, the move home (GETLINK
//      on the node, GETLINK in the pod, GETLINK + NEWLINK back under the node
//      name), then GETLINK, NEWADDR, up, NEWROUTE x2 on the node.
//
// With a macvlan/ipvlan config it is the floor of a child-mode ADD and DEL
// with IPAM addresses instead: no claim and no origin (GETLINK by index,
// GETADDR and GETROUTE of the parent are skipped, as erdma-cni skips them),
// the child made in the pod by one NEWLINK (IFLA_LINK + IFLA_NET_NS_FD) and a
// GETLINK in the pod, then the same pod-side steps with `ips`; DEL: DELRULE,
// GETLINK + DELLINK of the child in the pod. The IPAM plugin is not run: the
// floor has no exec.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "ipam/ipam.h"

namespace bench {

/// Wall time of each rtnetlink verb the floor called, in ms, by verb name
/// ("MoveLink", "ListRoutes", ...; "open" for a netns + socket).
using VerbTimes = std::map<std::string, std::vector<double>>;

struct FloorSpec {
  conf::Config cfg;            ///< parsed from the very config erdma-cni gets on stdin
  std::string pod_netns;       ///< CNI_NETNS
  std::string pod_if;          ///< CNI_IFNAME (standalone: the pod-side name)
  VerbTimes* times = nullptr;  ///< when set, every verb is timed into it
  /// Child modes: the addresses the IPAM plugin would give (move mode
  /// inherits the device's own).
  std::vector<ipam::IpConfig> ips;
  /// Experiment, not what erdma-cni does: set the link down before each move
  /// (host-device's order on DEL), to see what the kernel charges for moving
  /// a link that is up.
  bool down_before_move = false;
};

/// What ADD leaves for DEL: the journal as erdma-cni would have written it.
struct FloorAttachment {
  cni::AttachmentState st;
};

/// Runs in the node netns (the calling thread's).
base::Result<FloorAttachment> FloorAdd(const FloorSpec& spec);
base::Status FloorDel(const FloorSpec& spec, const FloorAttachment& att);

}  // namespace bench

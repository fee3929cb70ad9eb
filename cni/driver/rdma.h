// An attachment's RDMA side: the kernel's netns mode, the netdev's RDMA device (steps:
// journal/rdma_device.h).
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "conf/rdma_config.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rdma_pairing.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// What ADD will do about RDMA, decided before anything changes.
struct RdmaPlan {
  netlink::NetnsMode mode = netlink::NetnsMode::kShared;
  std::optional<netlink::PairMatch> pair;  ///< the node's RDMA device for the netdev
  std::string soft_name;                   ///< softRoce: the rxe device to create
  /// setSystemMode: the kernel's current mode, which StepRdmaMode switches to `mode`; unset when it is
  /// `mode`.
  std::optional<netlink::NetnsMode> switch_from;
  bool active() const { return pair.has_value() || !soft_name.empty(); }
};

/// Reads the kernel's RDMA netns mode (planning a switch when setSystemMode allows it) and pairs `netdev`.
/// Changes nothing. `host` is null when the kernel has no RDMA netlink, `open_error` saying why. With
/// rdma.required off, problems are logged and the plan is empty.
base::Result<RdmaPlan> ResolveRdma(const conf::RdmaConfig& cfg, const netlink::LinkInfo& netdev,
                                   netlink::Rdma* host, const base::Error* open_error,
                                   const std::string& sysfs_root, const std::string& soft_name);

}  // namespace cni

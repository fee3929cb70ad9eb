// The RDMA side of an attachment: the kernel's netns mode, pairing the netdev with its RDMA device, and the
// journal steps that move or create RDMA devices.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "conf/rdma_config.h"
#include "netlink/kernel.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rdma_pairing.h"

namespace cni {

/// What ADD will do about RDMA, decided before anything changes.
struct RdmaPlan {
  netlink::NetnsMode mode = netlink::NetnsMode::kShared;
  std::optional<netlink::PairMatch> pair;  ///< the node's RDMA device for the netdev
  std::string soft_name;                   ///< softRoce: the rxe device to create
  /// setSystemMode: the kernel's mode now, which the plan's first step
  /// switches to `mode` (StepRdmaMode); unset when it already is `mode`.
  std::optional<netlink::NetnsMode> switch_from;
  bool active() const { return pair.has_value() || !soft_name.empty(); }
};

/// Reads the kernel's RDMA netns mode (a switch to the configured one is planned when setSystemMode allows
/// it) and pairs `netdev` on the node. Changes nothing. `host` is null when the kernel has no RDMA netlink;
/// `open_error` then says why. Errors follow rdma.required: with it off, problems are logged and the plan is
/// empty.
base::Result<RdmaPlan> ResolveRdma(const conf::RdmaConfig& cfg, const netlink::LinkInfo& netdev,
                                   netlink::Rdma* host, const base::Error* open_error,
                                   const std::string& sysfs_root, const std::string& soft_name);

/// How to get RDMA netns mode `want` at boot, for error messages.
std::string NetnsModeBootFix(netlink::NetnsMode want);

/// Moves RDMA device `name` from `from` into the netns of `netns_fd`.
/// EOPNOTSUPP becomes kRdmaCannotMove with the fix.
base::Status MoveRdmaDevice(netlink::Rdma& from, const std::string& name, int netns_fd);

/// Inverse of a StepRdmaMove: the device back to the node. Already home, or
/// gone (a soft device dies with its netdev), counts as done.
base::Status ReturnRdmaDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod, int host_fd);

/// Inverse of a StepSoftRdma: delete the device wherever it is visible.
base::Status DeleteSoftDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod);

/// The index of the device named `name` as `rdma` sees it; nullopt if absent.
base::Result<std::optional<uint32_t>> FindRdmaDevice(netlink::Rdma& rdma, const std::string& name);

}  // namespace cni

// Moving, returning and deleting RDMA devices: what the RDMA steps (cni/core/rdma_steps.h) do and undo.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"
#include "netlink/rdma_kernel.h"

namespace cni {

/// How to get RDMA netns mode `want` at boot, for error messages.
std::string NetnsModeBootFix(netlink::NetnsMode want);

/// Moves RDMA device `name` from `from` into the netns of `netns_fd`; EOPNOTSUPP is kRdmaCannotMove.
base::Status MoveRdmaDevice(netlink::Rdma& from, const std::string& name, int netns_fd);

/// Inverse of a StepRdmaMove: the device back to the node; already home, or gone (a soft one), is done.
base::Status ReturnRdmaDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod, int host_fd);

/// Inverse of a StepSoftRdma: delete the device wherever it is visible.
base::Status DeleteSoftDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod);

/// The index of the device named `name` as `rdma` sees it; nullopt if absent.
base::Result<std::optional<uint32_t>> FindRdmaDevice(netlink::Rdma& rdma, const std::string& name);

}  // namespace cni

// netlink::Rdma over NETLINK_RDMA (netlink/transport.h, netlink/rdma_codec.h).
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/rdma_kernel.h"

namespace netlink {

/// Opens an RDMA netlink socket inside `ns` (netlink::Socket) and returns an Rdma bound to it. A kernel
/// without RDMA netlink (ib_core not loaded) gives Error{kKernel, "...: kernel has no RDMA netlink
/// (NETLINK_RDMA); load ib_core", sys_errno = EPROTONOSUPPORT}.
base::Result<std::unique_ptr<Rdma>> OpenRdma(const Netns& ns);

}  // namespace netlink

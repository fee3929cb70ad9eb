// netlink::Smc over NETLINK_GENERIC (netlink/transport.h, netlink/smc_codec.h).
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/smc_kernel.h"

namespace netlink {

/// Opens a generic netlink socket inside `ns` (netlink::Socket; the SMC tables a socket reaches are those of
/// its namespace) and returns an Smc bound to it. Resolves the SMC_PNETID and SMC_GEN_NETLINK family ids
/// once, here (asking nlctrl lets the kernel load smc.ko), and probes for the UEID commands with one
/// SMC_NETLINK_DUMP_UEID. A kernel without SMC_PNETID gives Error{kKernel, "<where>: " + kNoSmcMessage, ...,
/// sys_errno = ENOENT}; one without user EIDs opens fine, with HasUeid() false.
base::Result<std::unique_ptr<Smc>> OpenSmc(const Netns& ns);

}  // namespace netlink

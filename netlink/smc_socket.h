// netlink::Smc over NETLINK_GENERIC (netlink/transport.h, netlink/smc_codec.h).
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/smc.h"

namespace netlink {

/// Opens a generic netlink socket inside `ns` (switching into it just for
/// socket(); the SMC tables a socket reaches are those of the namespace it
/// was created in) and returns an Smc bound to it, with NETLINK_EXT_ACK on,
/// sequence numbers checked and dumps restarted when the kernel marks them
/// NLM_F_DUMP_INTR. It resolves the SMC_PNETID and SMC_GEN_NETLINK family
/// ids once, here (asking nlctrl lets the kernel load smc.ko where it can),
/// and probes for the UEID commands with one SMC_NETLINK_DUMP_UEID.
/// A kernel without SMC_PNETID gives Error{kKernel, "<where>: " +
/// kNoSmcMessage, ..., sys_errno = ENOENT}. A kernel with SMC_PNETID but no
/// user EID support opens fine, with HasUeid() false.
base::Result<std::unique_ptr<Smc>> OpenSmc(const Netns& ns);

}  // namespace netlink

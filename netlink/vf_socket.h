// netlink::Vf over a NETLINK_ROUTE socket (netlink/transport.h, netlink/vf_codec.h).
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/vf_kernel.h"

namespace netlink {

/// Opens an rtnetlink socket inside `ns` (netlink::Socket) and returns a Vf bound to it.
base::Result<std::unique_ptr<Vf>> OpenVf(const Netns& ns);

}  // namespace netlink

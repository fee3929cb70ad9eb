// netlink::Vf over a plain NETLINK_ROUTE socket (netlink/raw_socket.h).
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/vf.h"

namespace netlink {

/// Opens an rtnetlink socket inside `ns` (switching into it just for
/// socket()) and returns a Vf bound to it, with NETLINK_EXT_ACK on and
/// sequence numbers checked. Its receive buffer holds the largest answer a
/// PF can give (IFLA_VFINFO_LIST is capped at 64 KiB by its u16 length).
base::Result<std::unique_ptr<Vf>> OpenVf(const Netns& ns);

}  // namespace netlink

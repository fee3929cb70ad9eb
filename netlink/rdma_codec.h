// RDMA netlink (NETLINK_RDMA, client NLDEV) messages as bytes: building the requests erdma-cni sends and
// parsing what the kernel answers. Pure functions over buffers, no socket; libnl's nlmsg_* and nla_* only lay
// out and walk the bytes (netlink/raw_message.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"
#include "netlink/raw_message.h"
#include "netlink/rdma_kernel.h"

namespace netlink::nldev {

using Bytes = raw::Bytes;

/// nlmsg_type of an NLDEV command: RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op).
uint16_t MessageType(uint16_t op);

// Requests. Each is one whole netlink message: nlmsghdr (pid 0, the given sequence number) and attributes, no
// family header. Commands carry NLM_F_REQUEST|NLM_F_ACK, dumps NLM_F_REQUEST|NLM_F_DUMP.

/// RDMA_NLDEV_CMD_SYS_GET: the system settings (netns mode among them).
Bytes BuildSysGet(uint32_t seq);
/// RDMA_NLDEV_CMD_SYS_SET with RDMA_NLDEV_SYS_ATTR_NETNS_MODE (u8, 1 = shared).
Bytes BuildSysSet(uint32_t seq, NetnsMode mode);
/// RDMA_NLDEV_CMD_GET dump: every device the socket's namespace can see.
Bytes BuildDeviceDump(uint32_t seq);
/// RDMA_NLDEV_CMD_PORT_GET dump of one device's ports (the kernel refuses a
/// port dump without RDMA_NLDEV_ATTR_DEV_INDEX).
Bytes BuildPortDump(uint32_t seq, uint32_t dev_index);
/// RDMA_NLDEV_CMD_SET with RDMA_NLDEV_ATTR_DEV_INDEX and RDMA_NLDEV_NET_NS_FD.
Bytes BuildMoveDevice(uint32_t seq, uint32_t dev_index, uint32_t netns_fd);
/// RDMA_NLDEV_CMD_NEWLINK with RDMA_NLDEV_ATTR_DEV_NAME, _LINK_TYPE and _NDEV_NAME. EINVAL (nothing sent) for
/// names the kernel would refuse or truncate: empty, with '%' or NUL, a device name of 64 bytes or more, a
/// type or netdev name of 16 or more.
base::Result<Bytes> BuildNewLink(uint32_t seq, std::string_view name, std::string_view type,
                                 std::string_view netdev_name);
/// RDMA_NLDEV_CMD_DELLINK with RDMA_NLDEV_ATTR_DEV_INDEX.
Bytes BuildDelLink(uint32_t seq, uint32_t dev_index);

// Parsers of one whole message (its nlmsghdr first; bytes past nlmsg_len are ignored). They never read
// outside `msg`; a message of another type, a truncated one, a malformed attribute or a missing mandatory
// attribute is Error{kKernel, "malformed RDMA netlink reply: ...", sys_errno = EBADMSG}. Unknown attributes
// are skipped.

/// The RDMA_NLDEV_CMD_SYS_GET answer: RDMA_NLDEV_SYS_ATTR_NETNS_MODE is 1 for shared, 0 for exclusive.
base::Result<NetnsMode> ParseSysGet(std::span<const uint8_t> msg);
/// One RDMA_NLDEV_CMD_GET message: needs DEV_INDEX and DEV_NAME.
base::Result<RdmaDevice> ParseDevice(std::span<const uint8_t> msg);
/// One port message (type PORT_GET from a dump, GET from a single query):
/// needs DEV_INDEX, DEV_NAME and PORT_INDEX.
base::Result<RdmaPort> ParsePort(std::span<const uint8_t> msg);

/// "0216:3eff:fe10:f8b0" for 0x02163efffe10f8b0 (the node GUID attribute is in host byte order).
std::string FormatGuid(uint64_t guid);

/// Readable names for port states: "ACTIVE", "DOWN", ...; "UNKNOWN(9)".
std::string PortStateName(uint8_t state);
std::string PhysStateName(uint8_t phys_state);

}  // namespace netlink::nldev

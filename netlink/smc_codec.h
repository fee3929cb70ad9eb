// SMC generic netlink messages as bytes: resolving a generic netlink family
// by name (nlctrl's CTRL_CMD_GETFAMILY), the SMC_PNETID family's pnet table
// commands and the SMC_GEN_NETLINK family's user EID commands, and parsing
// what the kernel answers. Pure functions over buffers, no socket; libnl's
// nlmsg_* and nla_* only lay out and walk the bytes (netlink/raw_message.h).
// Shapes follow include/uapi/linux/smc.h, include/uapi/linux/genetlink.h and
// the kernel's net/smc/smc_pnet.c, smc_clc.c, smc_netlink.c and
// net/netlink/genetlink.c.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "netlink/raw_reply.h"
#include "netlink/smc.h"
#include "netlink/smc_input.h"

namespace netlink::smcnl {

using Bytes = raw::Bytes;

inline constexpr const char* kPnetFamily = "SMC_PNETID";      ///< SMCR_GENL_FAMILY_NAME
inline constexpr const char* kGenFamily = "SMC_GEN_NETLINK";  ///< SMC_GENL_FAMILY_NAME

// --- requests ---------------------------------------------------------------
// Each is one whole netlink message: nlmsghdr (type = the family id, pid 0,
// the given sequence number), genlmsghdr (cmd, version 1) and attributes.
// Commands carry NLM_F_REQUEST|NLM_F_ACK, dumps NLM_F_REQUEST|NLM_F_DUMP.

/// CTRL_CMD_GETFAMILY to nlctrl (GENL_ID_CTRL) with CTRL_ATTR_FAMILY_NAME.
/// EINVAL for an empty name or one of GENL_NAMSIZ (16) bytes or more.
base::Result<Bytes> BuildGetFamily(uint32_t seq, std::string_view name);
/// SMC_PNETID_GET dump: the pnet table of the socket's namespace.
Bytes BuildPnetDump(uint32_t seq, uint16_t family);
/// SMC_PNETID_ADD with SMC_PNETID_NAME (normalized) and either
/// SMC_PNETID_ETHNAME or SMC_PNETID_IBNAME + SMC_PNETID_IBPORT (u8).
base::Result<Bytes> BuildPnetAdd(uint32_t seq, uint16_t family, const PnetEntry& entry);
/// SMC_PNETID_DEL with SMC_PNETID_NAME (normalized).
base::Result<Bytes> BuildPnetDel(uint32_t seq, uint16_t family, std::string_view pnet_id);
/// SMC_NETLINK_DUMP_UEID dump.
Bytes BuildUeidDump(uint32_t seq, uint16_t family);
/// SMC_NETLINK_ADD_UEID / _REMOVE_UEID with SMC_NLA_EID_TABLE_ENTRY: the
/// normalized UEID padded with blanks to 32 characters, and a NUL (the
/// kernel wants exactly 33 payload bytes).
base::Result<Bytes> BuildUeidAdd(uint32_t seq, uint16_t family, std::string_view ueid);
base::Result<Bytes> BuildUeidRemove(uint32_t seq, uint16_t family, std::string_view ueid);

// --- answers ----------------------------------------------------------------
// Parsers of one whole message (nlmsghdr first; bytes past nlmsg_len are
// ignored). They never read outside `msg`; a message of another type or
// command, a truncated one, a malformed attribute or a missing mandatory one
// is Error{kKernel, "malformed generic netlink reply: ...", {}, EBADMSG}.
// Unknown attributes are skipped.

/// A generic netlink family as nlctrl describes it.
struct Family {
  uint16_t id = 0;            ///< CTRL_ATTR_FAMILY_ID: the nlmsg_type of its messages
  std::string name;           ///< CTRL_ATTR_FAMILY_NAME
  uint32_t version = 0;       ///< CTRL_ATTR_VERSION
  bool ops_listed = false;    ///< the answer carried CTRL_ATTR_OPS
  std::vector<uint32_t> ops;  ///< CTRL_ATTR_OP_ID of each operation, in the kernel's order

  /// Whether the family has command `cmd`; true when the kernel listed no
  /// operations at all (then there is nothing to go by).
  bool HasOp(uint32_t cmd) const;
  bool operator==(const Family&) const = default;
};

/// The CTRL_CMD_NEWFAMILY answer to BuildGetFamily: needs FAMILY_ID and FAMILY_NAME.
base::Result<Family> ParseFamily(std::span<const uint8_t> msg);
/// One SMC_PNETID_GET dump message of family `family`: needs NAME, ETHNAME,
/// IBNAME and IBPORT. The kernel fills the unused side with "n/a" (and port
/// 255); that side comes back empty (and port 0).
base::Result<PnetEntry> ParsePnetEntry(std::span<const uint8_t> msg, uint16_t family);
/// One SMC_NETLINK_DUMP_UEID dump message: the UEID, trimmed (TrimUeid).
base::Result<std::string> ParseUeid(std::span<const uint8_t> msg, uint16_t family);

// The answers come in datagrams that raw::ReadDatagram (netlink/raw_reply.h)
// splits into whole messages for the parsers above.
using raw::ReadDatagram;
using raw::Reply;

}  // namespace netlink::smcnl

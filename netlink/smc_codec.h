// SMC generic netlink messages as bytes: the SMC_PNETID family's pnet table commands and the SMC_GEN_NETLINK
// family's user EID commands (family ids as netlink::Socket::ResolveFamily gives them), and parsing what the
// kernel answers. Pure functions over buffers, no socket; libnl's nlmsg_* and nla_* only lay out and walk the
// bytes (netlink/raw_message.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"
#include "netlink/raw_message.h"
#include "netlink/smc_input.h"
#include "netlink/smc_kernel.h"

namespace netlink::smcnl {

using Bytes = raw::Bytes;

inline constexpr const char* kPnetFamily = "SMC_PNETID";      ///< SMCR_GENL_FAMILY_NAME
inline constexpr const char* kGenFamily = "SMC_GEN_NETLINK";  ///< SMC_GENL_FAMILY_NAME

// --- requests ---------------------------------------------------------------
// Each is one whole netlink message: nlmsghdr (type = the family id, pid 0,
// the given sequence number), genlmsghdr (cmd, version 1) and attributes.
// Commands carry NLM_F_REQUEST|NLM_F_ACK, dumps NLM_F_REQUEST|NLM_F_DUMP.

/// SMC_PNETID_GET dump: the pnet table of the socket's namespace.
Bytes BuildPnetDump(uint32_t seq, uint16_t family);
/// SMC_PNETID_ADD with SMC_PNETID_NAME (normalized) and either
/// SMC_PNETID_ETHNAME or SMC_PNETID_IBNAME + SMC_PNETID_IBPORT (u8).
base::Result<Bytes> BuildPnetAdd(uint32_t seq, uint16_t family, const PnetEntry& entry);
/// SMC_PNETID_DEL with SMC_PNETID_NAME (normalized).
base::Result<Bytes> BuildPnetDel(uint32_t seq, uint16_t family, std::string_view pnet_id);
/// SMC_NETLINK_DUMP_UEID dump.
Bytes BuildUeidDump(uint32_t seq, uint16_t family);
/// SMC_NETLINK_ADD_UEID / _REMOVE_UEID with SMC_NLA_EID_TABLE_ENTRY: the normalized UEID padded with blanks
/// to 32 characters, and a NUL (the kernel wants exactly 33 payload bytes).
base::Result<Bytes> BuildUeidAdd(uint32_t seq, uint16_t family, std::string_view ueid);
base::Result<Bytes> BuildUeidRemove(uint32_t seq, uint16_t family, std::string_view ueid);

// --- answers ----------------------------------------------------------------
// Parsers of one whole message (nlmsghdr first; bytes past nlmsg_len are ignored). They never read outside
// `msg`; a message of another type or command, a truncated one, a malformed attribute or a missing mandatory
// one is Error{kKernel, "malformed generic netlink reply: ...", {}, EBADMSG}. Unknown attributes are skipped.

/// One SMC_PNETID_GET dump message of family `family`: needs NAME, ETHNAME, IBNAME and IBPORT. The kernel
/// fills the unused side with "n/a" (and port 255); that side comes back empty (and port 0).
base::Result<PnetEntry> ParsePnetEntry(std::span<const uint8_t> msg, uint16_t family);
/// One SMC_NETLINK_DUMP_UEID dump message: the UEID, trimmed (TrimUeid).
base::Result<std::string> ParseUeid(std::span<const uint8_t> msg, uint16_t family);

}  // namespace netlink::smcnl

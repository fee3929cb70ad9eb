// rtnetlink messages about SR-IOV VFs as bytes: asking a PF for its VFs, reading the answer's
// IFLA_VFINFO_LIST, and changing VF settings through the PF. Pure functions over buffers, no socket; libnl's
// nlmsg_* and nla_* only lay out and walk the bytes (netlink/raw_message.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "netlink/raw_message.h"
#include "netlink/vf_kernel.h"

namespace netlink::vfmsg {

using Bytes = raw::Bytes;

/// RTM_GETLINK for the link `pf_index` (NLM_F_REQUEST|NLM_F_ACK: the answer is one RTM_NEWLINK, then the ACK)
/// with IFLA_EXT_MASK = RTEXT_FILTER_VF|RTEXT_FILTER_SKIP_STATS: the VF list, without per-VF counters.
Bytes BuildGetLink(uint32_t seq, int pf_index);

/// RTM_NEWLINK on the PF (ifinfomsg index = pf_index, NLM_F_REQUEST|NLM_F_ACK) carrying IFLA_VFINFO_LIST with
/// the set members of `s`: IFLA_VF_MAC, IFLA_VF_VLAN, IFLA_VF_RATE, IFLA_VF_SPOOFCHK, IFLA_VF_TRUST,
/// IFLA_VF_LINK_STATE and IFLA_VF_IB_NODE_GUID in one IFLA_VF_INFO, and IFLA_VF_IB_PORT_GUID in a second one
/// (the kernel sets one GUID per IFLA_VF_INFO). EINVAL, nothing built, for empty settings, a MAC that is not
/// six hex bytes or a GUID that is not eight.
base::Result<Bytes> BuildSetVf(uint32_t seq, int pf_index, const VfSettings& s);

/// The VFs in one RTM_NEWLINK message (its nlmsghdr first; bytes past nlmsg_len ignored), in the order the
/// kernel lists them; empty when it has no IFLA_VFINFO_LIST. The MAC is formatted with the link's address
/// length (IFLA_ADDRESS): six bytes for Ethernet, none otherwise. IFLA_VF_RATE wins over the older
/// IFLA_VF_TX_RATE; spoofchk and trust reported as -1 (the driver does not say) are nullopt. Never reads
/// outside `msg`; a message of another type, a truncated one, a malformed or short attribute, or an
/// IFLA_VF_INFO without IFLA_VF_MAC is Error{kKernel, "malformed rtnetlink reply: ...", sys_errno = EBADMSG}.
/// Unknown attributes are skipped.
base::Result<std::vector<VfState>> ParseVfList(std::span<const uint8_t> msg);

/// "00:11:22:33:44:55:66:77" for 0x0011223344556677 (the kernel's struct
/// ifla_vf_guid holds the GUID as a host-order number, first byte highest).
std::string FormatGuid(uint64_t guid);
/// The reverse; nullopt unless eight hex bytes separated by ':'.
std::optional<uint64_t> ParseGuid(std::string_view text);

}  // namespace netlink::vfmsg

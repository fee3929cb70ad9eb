// Parsing the kernel's answer to a netlink request: the errno and the extended ACK (NETLINK_EXT_ACK) text of
// an NLMSG_ERROR message, or of the NLMSG_DONE that ends a dump which failed part way.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace netlink {

/// What the kernel said about one request.
struct AckInfo {
  int error = 0;                   ///< positive errno; 0 for a plain ACK / a clean end of dump
  std::string msg;                 ///< NLMSGERR_ATTR_MSG; empty when the kernel gave none
  std::optional<uint32_t> offset;  ///< NLMSGERR_ATTR_OFFS: offset of the bad attribute in the request

  bool operator==(const AckInfo&) const = default;
};

/// Parses one whole NLMSG_ERROR message (nlmsghdr, nlmsgerr, then the echoed request payload unless
/// NLM_F_CAPPED, then TLVs when NLM_F_ACK_TLVS) or NLMSG_DONE message (nlmsghdr, int error, TLVs when
/// NLM_F_ACK_TLVS). nullopt when `bytes` is not such a message or is too short to hold its error code.
/// Malformed or truncated attributes end the parse early; the function never reads outside `bytes` nor past
/// the header's nlmsg_len.
std::optional<AckInfo> ParseAck(std::span<const uint8_t> bytes);

}  // namespace netlink

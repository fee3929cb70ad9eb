// Laying out one netlink request with libmnl, for the protocol codecs.
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "netlink/mnl_reply.h"

namespace netlink::mnl {

inline constexpr uint16_t kCommand = NLM_F_REQUEST | NLM_F_ACK;  ///< a command the kernel ACKs
inline constexpr uint16_t kDump = NLM_F_REQUEST | NLM_F_DUMP;    ///< a dump, ended by NLMSG_DONE

/// One request in a buffer of its own: nlmsghdr (pid 0, the kernel fills in
/// the sender), an optional family header, then attributes.
class Request {
 public:
  static constexpr size_t kMaxSize = 256;  ///< enough for every request erdma-cni sends

  Request(uint16_t type, uint16_t flags, uint32_t seq);
  // Moving keeps the buffer (and so nlh_) in place; a copy would not.
  Request(Request&&) = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request& operator=(Request&&) = delete;
  ~Request() = default;
  /// Reserves `size` zeroed bytes after nlmsghdr (genlmsghdr, ...); call
  /// before any attribute.
  void* PutExtraHeader(size_t size);
  void PutU8(uint16_t type, uint8_t v);
  void PutU32(uint16_t type, uint32_t v);
  void PutString(uint16_t type, const std::string& s);
  /// The message, or nothing when an attribute did not fit: callers validate
  /// their inputs first, so that does not happen.
  Bytes Finish() &&;

 private:
  Bytes buf_ = Bytes(kMaxSize);
  nlmsghdr* nlh_ = nullptr;
  bool ok_ = true;
};

}  // namespace netlink::mnl

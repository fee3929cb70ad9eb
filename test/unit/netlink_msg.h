// Canned netlink messages for the unit tests: bytes written out by hand
// (little endian) and messages laid out with libnl the way the kernel sends
// them, shared by the datagram reader's and the protocol codecs' tests.
#pragma once

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "netlink/libnl_ptr.h"

namespace netlink_test {

using Bytes = std::vector<uint8_t>;

inline constexpr uint32_t kPortid = 4242;  ///< the port the tests' socket would have

// --- bytes written out ------------------------------------------------------

inline void PutU16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
inline void PutU32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
inline void Append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }
/// A NUL-terminated string attribute, padded to 4 bytes.
// Sized once and filled in place: growing the vector piece by piece here made
// GCC 12 at -O2 and above report a memmove into or out of an empty buffer on
// the inlined reallocation paths (-Wstringop-overflow/-overread, false positives).
inline Bytes AttrString(uint16_t type, const std::string& s) {
  const size_t len = 4 + s.size() + 1;
  Bytes b((len + 3) & ~size_t{3}, 0);
  b[0] = uint8_t(len);
  b[1] = uint8_t(len >> 8);
  b[2] = uint8_t(type);
  b[3] = uint8_t(type >> 8);
  std::copy(s.begin(), s.end(), b.begin() + 4);
  return b;
}

// --- messages laid out with libnl -------------------------------------------

/// One message the kernel could send. Every call must succeed: a test whose
/// canned message did not fit would check the wrong bytes.
class Msg {
 public:
  Msg(uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid = kPortid) : msg_(nlmsg_alloc_size(4096)) {
    REQUIRE(msg_);
    REQUIRE(nlmsg_put(msg_.get(), pid, seq, type, 0, flags));
  }
  Msg& U8(uint16_t type, uint8_t v) {
    REQUIRE(nla_put_u8(msg_.get(), type, v) == 0);
    return *this;
  }
  Msg& U16(uint16_t type, uint16_t v) {
    REQUIRE(nla_put_u16(msg_.get(), type, v) == 0);
    return *this;
  }
  Msg& U32(uint16_t type, uint32_t v) {
    REQUIRE(nla_put_u32(msg_.get(), type, v) == 0);
    return *this;
  }
  Msg& U64(uint16_t type, uint64_t v) {
    REQUIRE(nla_put_u64(msg_.get(), type, v) == 0);
    return *this;
  }
  /// NUL-terminated.
  Msg& Str(uint16_t type, const std::string& s) {
    REQUIRE(nla_put_string(msg_.get(), type, s.c_str()) == 0);
    return *this;
  }
  Msg& Raw(uint16_t type, const Bytes& payload) {
    REQUIRE(nla_put(msg_.get(), type, int(payload.size()), payload.data()) == 0);
    return *this;
  }
  nlattr* Begin(uint16_t type) {
    nlattr* nest = nla_nest_start(msg_.get(), type);
    REQUIRE(nest);
    return nest;
  }
  Msg& End(nlattr* nest) {
    REQUIRE(nla_nest_end(msg_.get(), nest) == 0);
    return *this;
  }
  /// `size` zeroed bytes right after nlmsghdr (a family header, the error
  /// code of NLMSG_DONE, struct nlmsgerr): before any attribute.
  void* Extra(size_t size) {
    void* p = nlmsg_reserve(msg_.get(), size, NLMSG_ALIGNTO);
    REQUIRE(p);
    return p;
  }
  Bytes bytes() const {
    const nlmsghdr* hdr = nlmsg_hdr(msg_.get());
    const auto* begin = reinterpret_cast<const uint8_t*>(hdr);
    return Bytes(begin, begin + hdr->nlmsg_len);
  }

 private:
  netlink::nl::MsgPtr msg_;
};

/// NLMSG_DONE ending a dump, with its error code (0, or a negative errno).
inline Bytes Done(uint32_t seq, int32_t error = 0) {
  Msg m(NLMSG_DONE, NLM_F_MULTI, seq);
  *static_cast<int32_t*>(m.Extra(sizeof(int32_t))) = error;
  return m.bytes();
}

/// NLMSG_ERROR as netlink_ack sends it on a socket with CAP_ACK and EXT_ACK:
/// the request's header (of type `request_type`) echoed without its
/// payload, then the text.
inline Bytes ErrorMsg(uint32_t seq, int error, const std::string& extack = "",
                      uint16_t request_type = 0x1401) {
  Msg m(NLMSG_ERROR, uint16_t(NLM_F_CAPPED | (extack.empty() ? 0 : NLM_F_ACK_TLVS)), seq);
  auto* e = static_cast<nlmsgerr*>(m.Extra(sizeof(nlmsgerr)));
  e->error = -error;
  e->msg.nlmsg_len = 40;  // the request's length; its payload is not echoed
  e->msg.nlmsg_type = request_type;
  e->msg.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  e->msg.nlmsg_seq = seq;
  if (!extack.empty()) m.Str(NLMSGERR_ATTR_MSG, extack);
  return m.bytes();
}

/// Messages back to back, as one datagram.
inline Bytes Datagram(std::initializer_list<Bytes> messages) {
  Bytes d;
  for (const Bytes& m : messages) Append(d, m);
  return d;
}

}  // namespace netlink_test

// Canned netlink messages for the unit tests: bytes written out by hand
// (little endian) and messages laid out with libmnl the way the kernel sends
// them, shared by the datagram reader's and the protocol codecs' tests.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "netlink/mnl_reply.h"

namespace netlink_test {

using Bytes = std::vector<uint8_t>;

inline constexpr uint32_t kPortid = 4242;  ///< the port the tests' socket would have

// --- bytes written out ------------------------------------------------------

inline void PutU16(Bytes& b, uint16_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); }
inline void PutU32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
inline void Append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }
/// A NUL-terminated string attribute, padded to 4 bytes.
inline Bytes AttrString(uint16_t type, const std::string& s) {
  Bytes b;
  PutU16(b, uint16_t(4 + s.size() + 1));
  PutU16(b, type);
  b.insert(b.end(), s.begin(), s.end());
  b.push_back(0);
  while (b.size() % 4) b.push_back(0);
  return b;
}

// --- messages laid out with libmnl ------------------------------------------

/// One message the kernel could send.
class Msg {
 public:
  Msg(uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid = kPortid) {
    nlh_ = mnl_nlmsg_put_header(buf_.data());
    nlh_->nlmsg_type = type;
    nlh_->nlmsg_flags = flags;
    nlh_->nlmsg_seq = seq;
    nlh_->nlmsg_pid = pid;
  }
  Msg& U8(uint16_t type, uint8_t v) {
    mnl_attr_put_u8(nlh_, type, v);
    return *this;
  }
  Msg& U16(uint16_t type, uint16_t v) {
    mnl_attr_put_u16(nlh_, type, v);
    return *this;
  }
  Msg& U32(uint16_t type, uint32_t v) {
    mnl_attr_put_u32(nlh_, type, v);
    return *this;
  }
  Msg& U64(uint16_t type, uint64_t v) {
    mnl_attr_put_u64(nlh_, type, v);
    return *this;
  }
  Msg& Str(uint16_t type, const std::string& s) {
    mnl_attr_put_strz(nlh_, type, s.c_str());
    return *this;
  }
  Msg& Raw(uint16_t type, const Bytes& payload) {
    static const uint8_t kNothing = 0;
    mnl_attr_put(nlh_, type, payload.size(), payload.empty() ? &kNothing : payload.data());
    return *this;
  }
  nlattr* Begin(uint16_t type) { return mnl_attr_nest_start(nlh_, type); }
  Msg& End(nlattr* nest) {
    mnl_attr_nest_end(nlh_, nest);
    return *this;
  }
  nlmsghdr* nlh() { return nlh_; }
  Bytes bytes() const { return Bytes(buf_.begin(), buf_.begin() + nlh_->nlmsg_len); }

 private:
  Bytes buf_ = Bytes(4096);
  nlmsghdr* nlh_;
};

/// NLMSG_DONE ending a dump, with its error code (0, or a negative errno).
inline Bytes Done(uint32_t seq, int32_t error = 0) {
  Msg m(NLMSG_DONE, NLM_F_MULTI, seq);
  auto* e = static_cast<int32_t*>(mnl_nlmsg_put_extra_header(m.nlh(), sizeof(int32_t)));
  *e = error;
  return m.bytes();
}

/// NLMSG_ERROR as netlink_ack sends it on a socket with CAP_ACK and EXT_ACK:
/// the request's header (of type `request_type`) echoed without its
/// payload, then the text.
inline Bytes ErrorMsg(uint32_t seq, int error, const std::string& extack = "",
                      uint16_t request_type = 0x1401) {
  Msg m(NLMSG_ERROR, uint16_t(NLM_F_CAPPED | (extack.empty() ? 0 : NLM_F_ACK_TLVS)), seq);
  auto* e = static_cast<nlmsgerr*>(mnl_nlmsg_put_extra_header(m.nlh(), sizeof(nlmsgerr)));
  e->error = -error;
  e->msg.nlmsg_len = 40;  // the request's length; its payload is not echoed
  e->msg.nlmsg_type = request_type;
  e->msg.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  e->msg.nlmsg_seq = seq;
  if (!extack.empty()) mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, extack.c_str());
  return m.bytes();
}

/// Messages back to back, as one datagram.
inline Bytes Datagram(std::initializer_list<Bytes> messages) {
  Bytes d;
  for (const Bytes& m : messages) Append(d, m);
  return d;
}

/// The reply the datagrams make for request `seq`; each must read cleanly.
inline netlink::mnl::Reply ReadAll(std::initializer_list<Bytes> datagrams, uint32_t seq) {
  netlink::mnl::Reply r;
  for (const Bytes& d : datagrams) {
    auto s = netlink::mnl::ReadDatagram(d, seq, kPortid, r);
    INFO((s.ok() ? "" : s.error().msg));
    REQUIRE(s.ok());
  }
  return r;
}

}  // namespace netlink_test

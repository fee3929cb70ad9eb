// ParseAck on NLMSG_ERROR / NLMSG_DONE messages built byte by byte, the way
// the kernel lays them out (net/netlink/af_netlink.c, netlink_ack and
// netlink_dump_done).
#include "netlink/extack.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace test_unit_extack_test {

namespace {

using netlink::AckInfo;
using netlink::ParseAck;
using Bytes = std::vector<uint8_t>;

void PutU16(Bytes& b, uint16_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); }
void PutU32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void Pad(Bytes& b) {
  while (b.size() % 4) b.push_back(0);
}
void PutHeader(Bytes& b, uint32_t len, uint16_t type, uint16_t flags, uint32_t seq = 7) {
  PutU32(b, len);
  PutU16(b, type);
  PutU16(b, flags);
  PutU32(b, seq);
  PutU32(b, 1234);  // pid
}
/// One attribute, padded to 4 bytes.
void PutAttr(Bytes& b, uint16_t type, const void* data, size_t len) {
  PutU16(b, uint16_t(4 + len));
  PutU16(b, type);
  const auto* p = static_cast<const uint8_t*>(data);
  b.insert(b.end(), p, p + len);
  Pad(b);
}
void PutString(Bytes& b, uint16_t type, const std::string& s) { PutAttr(b, type, s.c_str(), s.size() + 1); }
/// Writes the final length into the outer header.
Bytes Finish(Bytes b) {
  const auto len = uint32_t(b.size());
  std::memcpy(b.data(), &len, 4);
  return b;
}

/// The request the errors below answer: RTM_NEWADDR with a 12-byte
/// payload plus one attribute (IFA_LOCAL 10.0.0.2), 32 bytes in all.
constexpr uint32_t kRequestLen = 16 + 8 + 8;
void PutRequestEcho(Bytes& b, bool with_payload) {
  PutHeader(b, kRequestLen, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE);
  if (!with_payload) return;
  const uint8_t ifa[8] = {AF_INET, 24, 0, 0, 5, 0, 0, 0};
  b.insert(b.end(), ifa, ifa + 8);
  const uint8_t ip[4] = {10, 0, 0, 2};
  PutAttr(b, 2 /*IFA_LOCAL*/, ip, 4);
}

/// An error answer: capped or with the request echoed, optionally with TLVs.
Bytes ErrorMessage(int error, bool capped, const std::string& text, std::optional<uint32_t> offs) {
  Bytes b;
  const bool tlvs = !text.empty() || offs.has_value();
  PutHeader(b, 0, NLMSG_ERROR, uint16_t((capped ? NLM_F_CAPPED : 0) | (tlvs ? NLM_F_ACK_TLVS : 0)));
  PutU32(b, uint32_t(error));
  PutRequestEcho(b, !capped);
  if (!text.empty()) PutString(b, NLMSGERR_ATTR_MSG, text);
  if (offs) PutAttr(b, NLMSGERR_ATTR_OFFS, &*offs, 4);
  return Finish(b);
}

std::optional<AckInfo> Parse(const Bytes& b) { return ParseAck(std::span<const uint8_t>(b)); }

}  // namespace

TEST_CASE("a capped error with extack text yields the errno and the text", "[extack]") {
  auto ack = Parse(ErrorMessage(-EEXIST, true, "ipv4: Address already assigned", std::nullopt));
  REQUIRE(ack);
  CHECK(ack->error == EEXIST);
  CHECK(ack->msg == "ipv4: Address already assigned");
  CHECK_FALSE(ack->offset);
}

TEST_CASE("an uncapped error skips the echoed request before the attributes", "[extack]") {
  auto ack = Parse(ErrorMessage(-ENODEV, false, "ipv4: Device not found", 24u));
  REQUIRE(ack);
  CHECK(ack->error == ENODEV);
  CHECK(ack->msg == "ipv4: Device not found");
  CHECK(ack->offset == 24u);
}

TEST_CASE("an echoed request of unaligned length is skipped with its padding", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_ERROR, NLM_F_ACK_TLVS);
  PutU32(b, uint32_t(-EINVAL));
  PutHeader(b, 16 + 5, RTM_NEWLINK, NLM_F_REQUEST);  // 5 payload bytes, padded to 8
  b.insert(b.end(), {1, 2, 3, 4, 5});
  Pad(b);
  PutString(b, NLMSGERR_ATTR_MSG, "odd");
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->error == EINVAL);
  CHECK(ack->msg == "odd");
}

TEST_CASE("an error without NLM_F_ACK_TLVS has no text even if bytes follow", "[extack]") {
  Bytes b = ErrorMessage(-EPERM, true, "ignored", std::nullopt);
  uint16_t flags = NLM_F_CAPPED;  // clear NLM_F_ACK_TLVS
  std::memcpy(b.data() + 6, &flags, 2);
  auto ack = Parse(b);
  REQUIRE(ack);
  CHECK(ack->error == EPERM);
  CHECK(ack->msg.empty());
}

TEST_CASE("a plain ACK parses as error 0", "[extack]") {
  auto ack = Parse(ErrorMessage(0, true, "", std::nullopt));
  REQUIRE(ack);
  CHECK(ack->error == 0);
  CHECK(ack->msg.empty());
}

TEST_CASE("an ACK with a warning keeps the warning text", "[extack]") {
  auto ack = Parse(ErrorMessage(0, true, "warning: something odd", std::nullopt));
  REQUIRE(ack);
  CHECK(ack->error == 0);
  CHECK(ack->msg == "warning: something odd");
}

TEST_CASE("a dump that failed part way reports the errno in its NLMSG_DONE", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS);
  PutU32(b, uint32_t(-EMSGSIZE));
  PutString(b, NLMSGERR_ATTR_MSG, "dump failed");
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->error == EMSGSIZE);
  CHECK(ack->msg == "dump failed");
}

TEST_CASE("a clean NLMSG_DONE reports no error", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_DONE, NLM_F_MULTI);
  PutU32(b, 0);
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->error == 0);
}

TEST_CASE("messages of other types are not acks", "[extack]") {
  Bytes b;
  PutHeader(b, 0, RTM_NEWLINK, 0);
  PutU32(b, uint32_t(-EEXIST));
  CHECK_FALSE(Parse(Finish(b)));
}

TEST_CASE("a text without its NUL terminator is taken whole", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS);
  PutU32(b, uint32_t(-EINVAL));
  PutRequestEcho(b, false);
  PutAttr(b, NLMSGERR_ATTR_MSG, "abcdef", 6);
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->msg == "abcdef");
}

TEST_CASE("unknown and nested-flagged attributes are skipped", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS);
  PutU32(b, uint32_t(-EINVAL));
  PutRequestEcho(b, false);
  const uint64_t cookie = 0x1122334455667788;
  PutAttr(b, NLMSGERR_ATTR_COOKIE, &cookie, 8);
  PutAttr(b, 0x7000, "xyz", 3);
  PutString(b, NLMSGERR_ATTR_MSG | NLA_F_NESTED, "flagged type");
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->msg == "flagged type");
}

TEST_CASE("buffers too short for a header or an error code are rejected", "[extack]") {
  CHECK_FALSE(Parse({}));
  CHECK_FALSE(Parse(Bytes(15, 0)));
  Bytes b;
  PutHeader(b, 18, NLMSG_ERROR, 0);
  b.push_back(0xff);
  b.push_back(0xff);
  CHECK_FALSE(Parse(b));  // 2 of the 4 error bytes
  Bytes small;
  PutHeader(small, 8, NLMSG_ERROR, 0);  // nlmsg_len below the header size
  PutU32(small, uint32_t(-EEXIST));
  CHECK_FALSE(Parse(small));
}

TEST_CASE("an error cut off inside the echoed header keeps its errno", "[extack]") {
  Bytes full = ErrorMessage(-EEXIST, true, "text", std::nullopt);
  Bytes cut(full.begin(), full.begin() + 16 + 4 + 6);
  const auto len = uint32_t(cut.size());
  std::memcpy(cut.data(), &len, 4);
  auto ack = Parse(cut);
  REQUIRE(ack);
  CHECK(ack->error == EEXIST);
  CHECK(ack->msg.empty());
}

TEST_CASE("nlmsg_len shorter than the buffer bounds the parse", "[extack]") {
  Bytes b = ErrorMessage(-EEXIST, true, "text", std::nullopt);
  const uint32_t before_tlvs = 16 + 4 + 16;
  std::memcpy(b.data(), &before_tlvs, 4);
  b.resize(b.size() + 64, 0xab);  // trailing bytes of the next message
  auto ack = Parse(b);
  REQUIRE(ack);
  CHECK(ack->error == EEXIST);
  CHECK(ack->msg.empty());
}

TEST_CASE("nlmsg_len longer than the buffer never reads past it", "[extack]") {
  Bytes b = ErrorMessage(-EEXIST, true, "ipv4: Address already assigned", std::nullopt);
  const uint32_t huge = 0xffffffff;
  std::memcpy(b.data(), &huge, 4);
  b.resize(b.size() - 6);  // the text attribute is now cut short
  auto ack = Parse(b);
  REQUIRE(ack);
  CHECK(ack->error == EEXIST);
  CHECK(ack->msg.empty());
}

TEST_CASE("an echoed request claiming a huge length leaves no attributes to read", "[extack]") {
  Bytes b;
  PutHeader(b, 0, NLMSG_ERROR, NLM_F_ACK_TLVS);  // not capped
  PutU32(b, uint32_t(-EINVAL));
  PutHeader(b, 0xfffffff0, RTM_NEWLINK, 0);
  PutString(b, NLMSGERR_ATTR_MSG, "unreachable");
  auto ack = Parse(Finish(b));
  REQUIRE(ack);
  CHECK(ack->error == EINVAL);
  CHECK(ack->msg.empty());
}

TEST_CASE("attributes with impossible lengths end the parse", "[extack]") {
  SECTION("a zero length") {
    Bytes b;
    PutHeader(b, 0, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS);
    PutU32(b, uint32_t(-EINVAL));
    PutRequestEcho(b, false);
    PutU16(b, 0);
    PutU16(b, NLMSGERR_ATTR_MSG);
    PutString(b, NLMSGERR_ATTR_MSG, "after the bad one");
    auto ack = Parse(Finish(b));
    REQUIRE(ack);
    CHECK(ack->error == EINVAL);
    CHECK(ack->msg.empty());
  }
  SECTION("a length past the end") {
    Bytes b;
    PutHeader(b, 0, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS);
    PutU32(b, uint32_t(-EINVAL));
    PutRequestEcho(b, false);
    PutU16(b, 200);
    PutU16(b, NLMSGERR_ATTR_MSG);
    b.insert(b.end(), {'h', 'i', 0, 0});
    auto ack = Parse(Finish(b));
    REQUIRE(ack);
    CHECK(ack->msg.empty());
  }
  SECTION("an offset attribute too short for a u32") {
    Bytes b;
    PutHeader(b, 0, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS);
    PutU32(b, uint32_t(-EINVAL));
    PutRequestEcho(b, false);
    PutAttr(b, NLMSGERR_ATTR_OFFS, "ab", 2);
    auto ack = Parse(Finish(b));
    REQUIRE(ack);
    CHECK_FALSE(ack->offset);
  }
}

TEST_CASE("an error code the kernel cannot have sent maps to EPROTO", "[extack]") {
  auto ack = Parse(ErrorMessage(INT32_MIN, true, "", std::nullopt));
  REQUIRE(ack);
  CHECK(ack->error == EPROTO);
}

TEST_CASE("every truncation and every flipped byte of a real error is survived", "[extack]") {
  const Bytes full = ErrorMessage(-ENODEV, false, "ipv4: Device not found", 24u);
  for (size_t n = 0; n <= full.size(); ++n) {
    Bytes cut(full.begin(), full.begin() + long(n));
    auto ack = Parse(cut);
    if (n >= 20) {
      REQUIRE(ack);
      CHECK(ack->error == ENODEV);
    } else {
      CHECK_FALSE(ack);
    }
  }
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x7f}}) {
      Bytes b = full;
      b[i] = v;
      (void)Parse(b);  // must not crash or read out of bounds (run under ASan)
    }
  }
  auto ack = Parse(full);
  REQUIRE(ack);
  CHECK(ack->msg == "ipv4: Device not found");
}

}  // namespace test_unit_extack_test

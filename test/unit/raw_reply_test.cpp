// netlink::raw::ReadDatagram: answers laid out by hand the way
// net/netlink/af_netlink.c sends them (netlink_ack, netlink_dump_done), around
// data messages of any protocol. The protocol tests (rdma_codec_test.cpp,
// smc_codec_test.cpp) parse what it collects.
#include "netlink/raw_reply.h"

#include <linux/netlink.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>

#include "test/unit/netlink_msg.h"

namespace {

using netlink::raw::ReadDatagram;
using netlink::raw::Reply;

using netlink_test::Bytes;
using netlink_test::Datagram;
using netlink_test::Done;
using netlink_test::ErrorMsg;
using netlink_test::kPortid;
using netlink_test::Msg;
using netlink_test::ReadAll;

constexpr uint16_t kData = 0x1401;  // any type past NLMSG_MIN_TYPE: here RDMA_NLDEV_CMD_GET
constexpr uint16_t kMulti = NLM_F_MULTI;

/// A data message of a dump (or a query answer when flags is 0).
Bytes Data(uint32_t seq, uint32_t index, const std::string& name, uint16_t flags = kMulti) {
  return Msg(kData, flags, seq).U32(1, index).Str(2, name).bytes();
}

}  // namespace

TEST_CASE("an NLMSG_ERROR gives the errno and the extended ACK text", "[reply]") {
  Reply r = ReadAll({ErrorMsg(13, EOPNOTSUPP, "Device cannot be moved")}, 13);
  CHECK(r.complete);
  CHECK(r.error == EOPNOTSUPP);
  CHECK(r.extack == "Device cannot be moved");
  CHECK(r.messages.empty());
}

TEST_CASE("a plain ACK completes a command with no error", "[reply]") {
  Reply r = ReadAll({ErrorMsg(14, 0)}, 14);
  CHECK(r.complete);
  CHECK(r.error == 0);
  CHECK(r.extack.empty());
}

TEST_CASE("a query answer and its ACK in separate datagrams complete only at the ACK", "[reply]") {
  Reply r;
  const Bytes answer = Data(15, 1, "erdma_0", 0);
  REQUIRE(ReadDatagram(answer, 15, kPortid, r).ok());
  CHECK_FALSE(r.complete);
  REQUIRE(ReadDatagram(ErrorMsg(15, 0), 15, kPortid, r).ok());
  CHECK(r.complete);
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0] == answer);
}

TEST_CASE("a dump in one datagram completes at NLMSG_DONE with every message, whole and in order",
          "[reply]") {
  const Bytes a = Data(11, 1, "erdma_0");
  const Bytes b = Data(11, 4, "rxe0");
  Reply r = ReadAll({Datagram({a, b, Done(11)})}, 11);
  CHECK(r.complete);
  CHECK(r.error == 0);
  CHECK_FALSE(r.interrupted);
  REQUIRE(r.messages.size() == 2);
  CHECK(r.messages[0] == a);
  CHECK(r.messages[1] == b);
}

TEST_CASE("a dump split over datagrams completes only at NLMSG_DONE, marked when a message is interrupted",
          "[reply]") {
  Reply r;
  REQUIRE(ReadDatagram(Data(9, 1, "A"), 9, kPortid, r).ok());
  CHECK_FALSE(r.complete);
  CHECK_FALSE(r.interrupted);
  REQUIRE(ReadDatagram(Datagram({Data(9, 2, "B", kMulti | NLM_F_DUMP_INTR), Done(9)}), 9, kPortid, r).ok());
  CHECK(r.complete);
  CHECK(r.interrupted);
  CHECK(r.messages.size() == 2);
}

TEST_CASE("a dump that fails part way ends with the errno and extended ACK of its NLMSG_DONE", "[reply]") {
  Reply r = ReadAll({Datagram({Data(16, 1, "erdma_0")}), Done(16, -ENOBUFS)}, 16);
  CHECK(r.complete);
  CHECK(r.error == ENOBUFS);
  CHECK(r.messages.size() == 1);
  // netlink_dump_done with NLM_F_ACK_TLVS: the error code, then the text.
  Msg done(NLMSG_DONE, kMulti | NLM_F_ACK_TLVS, 17);
  *static_cast<int32_t*>(done.Extra(sizeof(int32_t))) = -EINVAL;
  done.Str(NLMSGERR_ATTR_MSG, "dump refused");
  Reply with_text = ReadAll({done.bytes()}, 17);
  CHECK(with_text.complete);
  CHECK(with_text.error == EINVAL);
  CHECK(with_text.extack == "dump refused");
}

TEST_CASE("a bare NLMSG_DONE without an error code still ends a dump cleanly", "[reply]") {
  Reply r = ReadAll({Msg(NLMSG_DONE, kMulti, 2).bytes()}, 2);
  CHECK(r.complete);
  CHECK(r.error == 0);
}

TEST_CASE("an NLMSG_NOOP is skipped", "[reply]") {
  Reply r = ReadAll({Datagram({Msg(NLMSG_NOOP, 0, 3).bytes(), Data(3, 1, "a"), Done(3)})}, 3);
  CHECK(r.complete);
  CHECK(r.messages.size() == 1);
}

TEST_CASE("an answer with another sequence number or port is refused with EPROTO", "[reply]") {
  Reply r;
  auto seq = ReadDatagram(Datagram({Data(99, 1, "erdma_0"), Done(99)}), 18, kPortid, r);
  REQUIRE_FALSE(seq.ok());
  CHECK(seq.error().sys_errno == EPROTO);
  CHECK(r.messages.empty());
  auto done_seq = ReadDatagram(Done(10), 18, kPortid, r);
  REQUIRE_FALSE(done_seq.ok());
  CHECK(done_seq.error().sys_errno == EPROTO);
  Msg other_port(NLMSG_DONE, kMulti, 18, kPortid + 1);
  *static_cast<int32_t*>(other_port.Extra(sizeof(int32_t))) = 0;
  auto port = ReadDatagram(other_port.bytes(), 18, kPortid, r);
  REQUIRE_FALSE(port.ok());
  CHECK(port.error().sys_errno == EPROTO);
  CHECK_FALSE(r.complete);
}

TEST_CASE("a message from port 0 (the kernel) or read on an unbound socket passes the port check",
          "[reply]") {
  Reply from_kernel = ReadAll({Msg(NLMSG_DONE, kMulti, 4, 0).bytes()}, 4);
  CHECK(from_kernel.complete);
  Reply unbound;
  REQUIRE(ReadDatagram(Msg(NLMSG_DONE, kMulti, 4, kPortid + 1).bytes(), 4, 0, unbound).ok());
  CHECK(unbound.complete);
}

TEST_CASE("messages after the one that completed the answer are ignored", "[reply]") {
  Reply r = ReadAll({Datagram({Done(19), Data(19, 1, "late")})}, 19);
  CHECK(r.complete);
  CHECK(r.messages.empty());
}

TEST_CASE(
    "every truncation of a datagram is an EBADMSG error or a consistent prefix, never a completed answer",
    "[reply]") {
  const Bytes first = Data(12, 7, "erdma_0");
  const Bytes whole = Datagram({first, Done(12)});
  for (size_t n = 1; n < whole.size(); ++n) {
    INFO("first " << n << " bytes");
    Reply r;
    auto s = ReadDatagram(std::span<const uint8_t>(whole.data(), n), 12, kPortid, r);
    if (n < first.size()) {
      // Cut inside the first message, its header untouched: it claims more
      // bytes than there are.
      REQUIRE_FALSE(s.ok());
      CHECK(r.messages.empty());
    }
    if (s.ok()) {
      CHECK_FALSE(r.complete);
    } else {
      CHECK(s.error().sys_errno == EBADMSG);
      CHECK(s.error().code == base::Code::kKernel);
    }
  }
}

TEST_CASE("malformed datagrams and control messages are errors", "[reply]") {
  Reply r;
  SECTION("stray bytes after the last message") {
    Bytes d = Data(1, 1, "erdma_0");
    d.insert(d.end(), {1, 2, 3});
    auto s = ReadDatagram(d, 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == EBADMSG);
  }
  SECTION("nlmsg_len smaller than a header") {
    Bytes d = Done(1);
    d[0] = 8;
    auto s = ReadDatagram(d, 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == EBADMSG);
  }
  SECTION("an NLMSG_ERROR without its error code") {
    auto s = ReadDatagram(Msg(NLMSG_ERROR, 0, 1).bytes(), 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == EBADMSG);
  }
  SECTION("an unknown control message") {
    auto s = ReadDatagram(Msg(7, 0, 1).bytes(), 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == EBADMSG);
  }
  SECTION("an overrun") {
    auto s = ReadDatagram(Msg(NLMSG_OVERRUN, 0, 1).bytes(), 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == ENOBUFS);
  }
  CHECK_FALSE(r.complete);
}

TEST_CASE("a datagram at an odd address reads like an aligned one", "[reply]") {
  const Bytes whole = Datagram({Data(1, 3, "erdma_2"), Done(1)});
  Bytes shifted(whole.size() + 1);
  std::memcpy(shifted.data() + 1, whole.data(), whole.size());
  Reply r;
  REQUIRE(ReadDatagram(std::span<const uint8_t>(shifted).subspan(1), 1, kPortid, r).ok());
  CHECK(r.complete);
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0] == Data(1, 3, "erdma_2"));
}

TEST_CASE("random bytes never crash the datagram reader", "[reply]") {
  // Seeded, so a failure repeats. Run under ERDMA_CNI_SANITIZE to catch
  // out-of-bounds reads that happen not to crash.
  std::mt19937 rng(20240601);
  const Bytes seeds[] = {Datagram({Data(1, 7, "erdma_0"), Done(1)}), ErrorMsg(1, EINVAL, "bad"),
                         Done(1, -ENOBUFS)};
  int read = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes b = seeds[i % 3];
    // Flip a few bytes, keeping the first header plausible half the time.
    const size_t from = i % 2 ? 16 : 0;
    for (int f = 0; f < 1 + int(rng() % 6); ++f) b[from + rng() % (b.size() - from)] = uint8_t(rng());
    b.resize(rng() % (b.size() + 8));
    Reply r;
    if (ReadDatagram(b, 1, kPortid, r).ok()) ++read;
  }
  CHECK(read < 3000);
}

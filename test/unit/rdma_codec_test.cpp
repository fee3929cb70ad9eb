// netlink::nldev: requests checked byte for byte against the layout of
// include/uapi/rdma/rdma_netlink.h (numbers written out, so a wrong enum is
// caught), and answers laid out by hand the way drivers/infiniband/core/
// nldev.c and net/netlink/af_netlink.c send them.
#include "netlink/rdma_codec.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test/unit/netlink_msg.h"

namespace test_unit_rdma_codec_test {

namespace {

using netlink::NetnsMode;
using netlink::RdmaDevice;
using netlink::RdmaPort;
using netlink_test::Append;
using netlink_test::AttrString;
using netlink_test::Bytes;
using netlink_test::Msg;
using netlink_test::PutU16;
using netlink_test::PutU32;

// --- expected request bytes, little endian --------------------------------

Bytes Header(uint32_t len, uint16_t type, uint16_t flags, uint32_t seq) {
  Bytes b;
  PutU32(b, len);
  PutU16(b, type);
  PutU16(b, flags);
  PutU32(b, seq);
  PutU32(b, 0);  // pid: the kernel's
  return b;
}
Bytes AttrU32(uint16_t type, uint32_t v) {
  Bytes b;
  PutU16(b, 8);
  PutU16(b, type);
  PutU32(b, v);
  return b;
}
// --- canned answers, laid out with libnl on a buffer -----------------------

/// A message of NLDEV command `op`.
Msg NldevMsg(uint16_t op, uint16_t flags, uint32_t seq) {
  return Msg(uint16_t(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)), flags, seq);
}

constexpr uint16_t kMulti = NLM_F_MULTI;

Bytes DeviceMsg(uint32_t seq, uint32_t index, const std::string& name, uint64_t guid) {
  return NldevMsg(RDMA_NLDEV_CMD_GET, kMulti, seq)
      .U32(RDMA_NLDEV_ATTR_DEV_INDEX, index)
      .Str(RDMA_NLDEV_ATTR_DEV_NAME, name)
      .U32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
      .U64(RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1234)
      .Str(RDMA_NLDEV_ATTR_FW_VERSION, "0.2.0")
      .U64(RDMA_NLDEV_ATTR_NODE_GUID, guid)
      .U64(RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, guid)
      .U8(RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1)
      .Str(RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce")
      .bytes();
}

Bytes PortMsg(uint32_t seq, uint32_t index, const std::string& name, uint32_t ndev_index,
              const std::string& ndev_name) {
  Msg m = NldevMsg(RDMA_NLDEV_CMD_PORT_GET, kMulti, seq);
  m.U32(RDMA_NLDEV_ATTR_DEV_INDEX, index)
      .Str(RDMA_NLDEV_ATTR_DEV_NAME, name)
      .U32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
      .U64(RDMA_NLDEV_ATTR_CAP_FLAGS, 0)
      .U8(RDMA_NLDEV_ATTR_PORT_STATE, 4)
      .U8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);
  if (ndev_index != 0)
    m.U32(RDMA_NLDEV_ATTR_NDEV_INDEX, ndev_index).Str(RDMA_NLDEV_ATTR_NDEV_NAME, ndev_name);
  return m.bytes();
}

}  // namespace

TEST_CASE("an NLDEV message type is the client number shifted by ten plus the command", "[rdma]") {
  CHECK(netlink::nldev::MessageType(RDMA_NLDEV_CMD_GET) == 0x1401);
  CHECK(netlink::nldev::MessageType(RDMA_NLDEV_CMD_PORT_GET) == 0x1405);
  CHECK(netlink::nldev::MessageType(RDMA_NLDEV_CMD_SYS_SET) == 0x1407);
}

TEST_CASE("the sys-get request is a bare header asking for an ACK", "[rdma]") {
  CHECK(netlink::nldev::BuildSysGet(7) == Header(16, 0x1406, NLM_F_REQUEST | NLM_F_ACK, 7));
}

TEST_CASE("the sys-set request carries the netns mode as one byte, 1 for shared and 0 for exclusive",
          "[rdma]") {
  // u8 attribute 66 (RDMA_NLDEV_SYS_ATTR_NETNS_MODE): length 5, padded to 8.
  Bytes shared = Header(24, 0x1407, NLM_F_REQUEST | NLM_F_ACK, 9);
  Append(shared, {5, 0, 66, 0, 1, 0, 0, 0});
  CHECK(netlink::nldev::BuildSysSet(9, NetnsMode::kShared) == shared);
  Bytes exclusive = Header(24, 0x1407, NLM_F_REQUEST | NLM_F_ACK, 9);
  Append(exclusive, {5, 0, 66, 0, 0, 0, 0, 0});
  CHECK(netlink::nldev::BuildSysSet(9, NetnsMode::kExclusive) == exclusive);
}

TEST_CASE("the device dump request is a bare header with REQUEST and DUMP", "[rdma]") {
  CHECK(netlink::nldev::BuildDeviceDump(3) == Header(16, 0x1401, NLM_F_REQUEST | NLM_F_DUMP, 3));
}

TEST_CASE("the port dump request names its device by index", "[rdma]") {
  Bytes want = Header(24, 0x1405, NLM_F_REQUEST | NLM_F_DUMP, 4);
  Append(want, AttrU32(1, 17));  // RDMA_NLDEV_ATTR_DEV_INDEX
  CHECK(netlink::nldev::BuildPortDump(4, 17) == want);
}

TEST_CASE("the move request carries the device index and the netns fd as u32 attributes", "[rdma]") {
  Bytes want = Header(32, 0x1402, NLM_F_REQUEST | NLM_F_ACK, 5);
  Append(want, AttrU32(1, 3));   // RDMA_NLDEV_ATTR_DEV_INDEX
  Append(want, AttrU32(68, 9));  // RDMA_NLDEV_NET_NS_FD
  CHECK(netlink::nldev::BuildMoveDevice(5, 3, 9) == want);
}

TEST_CASE("the newlink request carries device name, link type and netdev name NUL-terminated", "[rdma]") {
  Bytes want = Header(16 + 12 + 8 + 12, 0x1403, NLM_F_REQUEST | NLM_F_ACK, 6);
  Append(want, AttrString(2, "rxe0"));   // RDMA_NLDEV_ATTR_DEV_NAME
  Append(want, AttrString(65, "rxe"));   // RDMA_NLDEV_ATTR_LINK_TYPE
  Append(want, AttrString(51, "eth1"));  // RDMA_NLDEV_ATTR_NDEV_NAME
  auto got = netlink::nldev::BuildNewLink(6, "rxe0", "rxe", "eth1");
  REQUIRE(got.ok());
  CHECK(*got == want);
}

TEST_CASE("the newlink request refuses names the kernel would refuse or truncate", "[rdma]") {
  const std::string longest_device(63, 'd');
  CHECK(netlink::nldev::BuildNewLink(1, longest_device, "rxe", "eth1").ok());
  CHECK(netlink::nldev::BuildNewLink(1, "rxe0", "rxe", "fifteen-chars-x").ok());
  for (auto [name, type, netdev] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"", "rxe", "eth1"},
           {"rxe%d", "rxe", "eth1"},
           {longest_device + "d", "rxe", "eth1"},
           {std::string("rx\0e", 4), "rxe", "eth1"},
           {"rxe0", "", "eth1"},
           {"rxe0", "rxe", ""},
           {"rxe0", "rxe", "sixteen-chars-xx"},
       }) {
    auto got = netlink::nldev::BuildNewLink(1, name, type, netdev);
    INFO(name << " / " << type << " / " << netdev);
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().sys_errno == EINVAL);
  }
}

TEST_CASE("the dellink request carries the device index", "[rdma]") {
  Bytes want = Header(24, 0x1404, NLM_F_REQUEST | NLM_F_ACK, 8);
  Append(want, AttrU32(1, 12));
  CHECK(netlink::nldev::BuildDelLink(8, 12) == want);
}

TEST_CASE("the sys-get answer reads 1 as shared and 0 as exclusive", "[rdma]") {
  auto shared = netlink::nldev::ParseSysGet(NldevMsg(RDMA_NLDEV_CMD_SYS_GET, 0, 1)
                                                .U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1)
                                                .U8(RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1)
                                                .bytes());
  REQUIRE(shared.ok());
  CHECK(*shared == NetnsMode::kShared);
  auto exclusive = netlink::nldev::ParseSysGet(
      NldevMsg(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 0).bytes());
  REQUIRE(exclusive.ok());
  CHECK(*exclusive == NetnsMode::kExclusive);
}

TEST_CASE("a sys-get answer without the mode, with an unknown mode or of another type is an error",
          "[rdma]") {
  for (const Bytes& bad : {
           NldevMsg(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1).bytes(),
           NldevMsg(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 2).bytes(),
           NldevMsg(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U32(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1).bytes(),
           NldevMsg(RDMA_NLDEV_CMD_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1).bytes(),
       }) {
    auto got = netlink::nldev::ParseSysGet(bad);
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().sys_errno == EBADMSG);
    CHECK(got.error().code == base::Code::kKernel);
  }
}

TEST_CASE("a device dump of two devices parses both, the node GUID written as rdma dev prints it", "[rdma]") {
  auto a = netlink::nldev::ParseDevice(DeviceMsg(11, 1, "erdma_0", 0x02163efffe10f8b0ULL));
  auto b = netlink::nldev::ParseDevice(DeviceMsg(11, 4, "rxe0", 0x0000000000000001ULL));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == RdmaDevice{1, "erdma_0", "0216:3eff:fe10:f8b0", 1, "roce"});
  CHECK(*b == RdmaDevice{4, "rxe0", "0000:0000:0000:0001", 1, "roce"});
}

TEST_CASE("a device message needs its index and name, other attributes are optional", "[rdma]") {
  auto minimal = netlink::nldev::ParseDevice(NldevMsg(RDMA_NLDEV_CMD_GET, kMulti, 1)
                                                 .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2)
                                                 .Str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0")
                                                 .bytes());
  REQUIRE(minimal.ok());
  CHECK(*minimal == RdmaDevice{2, "mlx5_0", "", 0, ""});
  auto no_name = netlink::nldev::ParseDevice(
      NldevMsg(RDMA_NLDEV_CMD_GET, kMulti, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2).bytes());
  REQUIRE_FALSE(no_name.ok());
  CHECK(no_name.error().msg.find("RDMA_NLDEV_ATTR_DEV_NAME") != std::string::npos);
}

TEST_CASE("a pad attribute before a 64-bit value is skipped", "[rdma]") {
  // nla_put_u64_64bit inserts RDMA_NLDEV_ATTR_PAD (type 0) where u64
  // payloads must be 8-byte aligned.
  auto d = netlink::nldev::ParseDevice(NldevMsg(RDMA_NLDEV_CMD_GET, kMulti, 1)
                                           .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2)
                                           .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_1")
                                           .Raw(RDMA_NLDEV_ATTR_PAD, {})
                                           .U64(RDMA_NLDEV_ATTR_NODE_GUID, 0xabcdef0123456789ULL)
                                           .bytes());
  REQUIRE(d.ok());
  CHECK(d->node_guid == "abcd:ef01:2345:6789");
}

TEST_CASE("a port dump gives the netdev when the kernel sends it and zero when it does not", "[rdma]") {
  auto with = netlink::nldev::ParsePort(PortMsg(12, 1, "erdma_0", 5, "eth1"));
  auto without = netlink::nldev::ParsePort(PortMsg(12, 4, "rxe0", 0, ""));
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  CHECK(*with == RdmaPort{1, "erdma_0", 1, 5, "eth1", 4, 5});
  CHECK(*without == RdmaPort{4, "rxe0", 1, 0, "", 4, 5});
}

TEST_CASE("a port answer to a single query comes with type GET and parses too", "[rdma]") {
  auto p = netlink::nldev::ParsePort(NldevMsg(RDMA_NLDEV_CMD_GET, 0, 1)
                                         .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                                         .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_0")
                                         .U32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
                                         .bytes());
  REQUIRE(p.ok());
  CHECK(p->port == 1);
  auto no_port = netlink::nldev::ParsePort(NldevMsg(RDMA_NLDEV_CMD_PORT_GET, 0, 1)
                                               .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                                               .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_0")
                                               .bytes());
  REQUIRE_FALSE(no_port.ok());
  CHECK(no_port.error().msg.find("RDMA_NLDEV_ATTR_PORT_INDEX") != std::string::npos);
}

TEST_CASE("every truncation of a device message is an error or a consistent prefix, never more", "[rdma]") {
  const Bytes whole = DeviceMsg(1, 7, "erdma_0", 0x02163efffe10f8b0ULL);
  for (size_t len = 0; len < whole.size(); ++len) {
    INFO("cut at " << len);
    // Cut, header untouched: the message claims more bytes than there are.
    Bytes cut(whole.begin(), whole.begin() + len);
    CHECK_FALSE(netlink::nldev::ParseDevice(cut).ok());
    // Cut with nlmsg_len saying so: only whole attributes may survive.
    if (len < sizeof(nlmsghdr)) continue;
    uint32_t l = uint32_t(len);
    std::memcpy(cut.data(), &l, sizeof l);
    auto d = netlink::nldev::ParseDevice(cut);
    if (d.ok()) {
      CHECK(d->index == 7);
      CHECK(d->name == "erdma_0");
    }
  }
}

TEST_CASE("malformed attributes are errors", "[rdma]") {
  // A valid device message (index and name) followed by one bad attribute.
  auto with_attr = [](uint16_t nla_len, uint16_t type, const Bytes& payload, size_t padded) {
    Bytes b = Header(0, 0x1401, kMulti, 1);
    Append(b, AttrU32(1, 1));
    Append(b, AttrString(2, "erdma_0"));
    PutU16(b, nla_len);
    PutU16(b, type);
    Append(b, payload);
    b.resize(b.size() + padded, 0);
    const uint32_t len = uint32_t(b.size());
    std::memcpy(b.data(), &len, sizeof len);
    return b;
  };
  auto malformed = [](const Bytes& b) {
    auto d = netlink::nldev::ParseDevice(b);
    if (d.ok()) return false;
    INFO(d.error().msg);
    CHECK(d.error().sys_errno == EBADMSG);
    return d.error().msg.find("truncated attribute") != std::string::npos ||
           d.error().msg.find("bad payload") != std::string::npos;
  };
  CHECK_FALSE(malformed(with_attr(4, 0, {}, 0)));  // the frame itself is valid
  SECTION("an attribute longer than the message") { CHECK(malformed(with_attr(200, 2, {'a', 0}, 2))); }
  SECTION("an attribute shorter than its own header") { CHECK(malformed(with_attr(2, 2, {}, 0))); }
  SECTION("a name without its NUL") { CHECK(malformed(with_attr(6, 2, {'a', 'b'}, 2))); }
  SECTION("an empty name") { CHECK(malformed(with_attr(4, 2, {}, 0))); }
  SECTION("a u32 of two bytes") { CHECK(malformed(with_attr(6, 1, {1, 0}, 2))); }
  SECTION("a u64 GUID of four bytes") { CHECK(malformed(with_attr(8, 6, {1, 0, 0, 0}, 0))); }
  SECTION("two stray bytes at the end") { CHECK(malformed(with_attr(4, 0, {}, 2))); }
}

TEST_CASE("a message at an odd address parses like an aligned one", "[rdma]") {
  const Bytes whole = PortMsg(1, 3, "erdma_2", 9, "eth2");
  Bytes shifted(whole.size() + 1);
  std::memcpy(shifted.data() + 1, whole.data(), whole.size());
  auto p = netlink::nldev::ParsePort(std::span<const uint8_t>(shifted).subspan(1));
  REQUIRE(p.ok());
  CHECK(*p == RdmaPort{3, "erdma_2", 1, 9, "eth2", 4, 5});
}

TEST_CASE("random bytes never crash the parsers", "[rdma]") {
  // Seeded, so a failure repeats. Run under ERDMA_CNI_SANITIZE to catch
  // out-of-bounds reads that happen not to crash.
  std::mt19937 rng(20240601);
  const Bytes seed_msg = DeviceMsg(1, 7, "erdma_0", 1);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes b = seed_msg;
    // Flip a few bytes of a valid message, keeping the header plausible half the time.
    const int flips = 1 + int(rng() % 6);
    for (int f = 0; f < flips; ++f)
      b[(i % 2 ? 16 : 0) + rng() % (b.size() - (i % 2 ? 16 : 0))] = uint8_t(rng());
    b.resize(rng() % (b.size() + 8));
    if (netlink::nldev::ParseDevice(b).ok()) ++parsed;
    (void)netlink::nldev::ParsePort(b);
    (void)netlink::nldev::ParseSysGet(b);
  }
  CHECK(parsed < 3000);
}

TEST_CASE("port states have the names rdma link prints", "[rdma]") {
  CHECK(netlink::nldev::PortStateName(4) == "ACTIVE");
  CHECK(netlink::nldev::PortStateName(1) == "DOWN");
  CHECK(netlink::nldev::PortStateName(9) == "UNKNOWN(9)");
  CHECK(netlink::nldev::PhysStateName(5) == "LINK_UP");
  CHECK(netlink::nldev::PhysStateName(3) == "DISABLED");
  CHECK(netlink::nldev::PhysStateName(0) == "UNKNOWN(0)");
}

}  // namespace test_unit_rdma_codec_test

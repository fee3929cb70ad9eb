// netlink::nldev: requests checked byte for byte against the layout of
// include/uapi/rdma/rdma_netlink.h (numbers written out, so a wrong enum is
// caught), and answers laid out by hand the way drivers/infiniband/core/
// nldev.c and net/netlink/af_netlink.c send them.
#include "netlink/rdma_codec.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using netlink::NetnsMode;
using netlink::RdmaDevice;
using netlink::RdmaPort;
using netlink::nldev::Bytes;
using netlink::nldev::Reply;

constexpr uint32_t kPortid = 4242;

// --- expected request bytes, little endian --------------------------------

void PutU16(Bytes& b, uint16_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); }
void PutU32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
Bytes Header(uint32_t len, uint16_t type, uint16_t flags, uint32_t seq) {
  Bytes b;
  PutU32(b, len);
  PutU16(b, type);
  PutU16(b, flags);
  PutU32(b, seq);
  PutU32(b, 0);  // pid: the kernel's
  return b;
}
void Append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }
Bytes AttrU32(uint16_t type, uint32_t v) {
  Bytes b;
  PutU16(b, 8);
  PutU16(b, type);
  PutU32(b, v);
  return b;
}
Bytes AttrString(uint16_t type, const std::string& s) {
  Bytes b;
  PutU16(b, uint16_t(4 + s.size() + 1));
  PutU16(b, type);
  b.insert(b.end(), s.begin(), s.end());
  b.push_back(0);
  while (b.size() % 4) b.push_back(0);
  return b;
}

// --- canned answers, laid out with libmnl on a buffer ----------------------

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
  static Msg Nldev(uint16_t op, uint16_t flags, uint32_t seq) {
    return Msg(uint16_t(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)), flags, seq);
  }
  Msg& U8(uint16_t type, uint8_t v) {
    mnl_attr_put_u8(nlh_, type, v);
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
  nlmsghdr* nlh() { return nlh_; }
  Bytes bytes() const { return Bytes(buf_.begin(), buf_.begin() + nlh_->nlmsg_len); }

 private:
  Bytes buf_ = Bytes(4096);
  nlmsghdr* nlh_;
};

constexpr uint16_t kMulti = NLM_F_MULTI;

Bytes DeviceMsg(uint32_t seq, uint32_t index, const std::string& name, uint64_t guid) {
  return Msg::Nldev(RDMA_NLDEV_CMD_GET, kMulti, seq)
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
  Msg m = Msg::Nldev(RDMA_NLDEV_CMD_PORT_GET, kMulti, seq);
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

Bytes Done(uint32_t seq, int32_t error = 0) {
  Msg m(NLMSG_DONE, kMulti, seq);
  auto* e = static_cast<int32_t*>(mnl_nlmsg_put_extra_header(m.nlh(), sizeof(int32_t)));
  *e = error;
  return m.bytes();
}

/// NLMSG_ERROR as netlink_ack sends it on a socket with CAP_ACK and EXT_ACK:
/// the request's header echoed without its payload, then the text.
Bytes Error(uint32_t seq, int error, const std::string& extack = "") {
  Msg m(NLMSG_ERROR, uint16_t(NLM_F_CAPPED | (extack.empty() ? 0 : NLM_F_ACK_TLVS)), seq);
  auto* e = static_cast<nlmsgerr*>(mnl_nlmsg_put_extra_header(m.nlh(), sizeof(nlmsgerr)));
  e->error = -error;
  e->msg.nlmsg_len = 40;  // the request's length; its payload is not echoed
  e->msg.nlmsg_type = uint16_t(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SET));
  e->msg.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  e->msg.nlmsg_seq = seq;
  if (!extack.empty()) mnl_attr_put_strz(m.nlh(), NLMSGERR_ATTR_MSG, extack.c_str());
  return m.bytes();
}

Bytes Datagram(std::initializer_list<Bytes> messages) {
  Bytes d;
  for (const Bytes& m : messages) Append(d, m);
  return d;
}

Reply ReadAll(std::initializer_list<Bytes> datagrams, uint32_t seq) {
  Reply r;
  for (const Bytes& d : datagrams) {
    auto s = netlink::nldev::ReadDatagram(d, seq, kPortid, r);
    INFO((s.ok() ? "" : s.error().msg));
    REQUIRE(s.ok());
  }
  return r;
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
  auto shared = netlink::nldev::ParseSysGet(Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 1)
                                                .U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1)
                                                .U8(RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1)
                                                .bytes());
  REQUIRE(shared.ok());
  CHECK(*shared == NetnsMode::kShared);
  auto exclusive = netlink::nldev::ParseSysGet(
      Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 0).bytes());
  REQUIRE(exclusive.ok());
  CHECK(*exclusive == NetnsMode::kExclusive);
}

TEST_CASE("a sys-get answer without the mode, with an unknown mode or of another type is an error",
          "[rdma]") {
  for (const Bytes& bad : {
           Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1).bytes(),
           Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 2).bytes(),
           Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 1).U32(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1).bytes(),
           Msg::Nldev(RDMA_NLDEV_CMD_GET, 0, 1).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1).bytes(),
       }) {
    auto got = netlink::nldev::ParseSysGet(bad);
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().sys_errno == EBADMSG);
    CHECK(got.error().code == base::Code::kKernel);
  }
}

TEST_CASE("a device dump of two devices parses both, the node GUID written as rdma dev prints it", "[rdma]") {
  Reply r = ReadAll({Datagram({DeviceMsg(11, 1, "erdma_0", 0x02163efffe10f8b0ULL),
                               DeviceMsg(11, 4, "rxe0", 0x0000000000000001ULL)}),
                     Done(11)},
                    11);
  CHECK(r.complete);
  CHECK(r.error == 0);
  CHECK_FALSE(r.interrupted);
  REQUIRE(r.messages.size() == 2);
  auto a = netlink::nldev::ParseDevice(r.messages[0]);
  auto b = netlink::nldev::ParseDevice(r.messages[1]);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == RdmaDevice{1, "erdma_0", "0216:3eff:fe10:f8b0", 1, "roce"});
  CHECK(*b == RdmaDevice{4, "rxe0", "0000:0000:0000:0001", 1, "roce"});
}

TEST_CASE("a device message needs its index and name, other attributes are optional", "[rdma]") {
  auto minimal = netlink::nldev::ParseDevice(Msg::Nldev(RDMA_NLDEV_CMD_GET, kMulti, 1)
                                                 .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2)
                                                 .Str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0")
                                                 .bytes());
  REQUIRE(minimal.ok());
  CHECK(*minimal == RdmaDevice{2, "mlx5_0", "", 0, ""});
  auto no_name = netlink::nldev::ParseDevice(
      Msg::Nldev(RDMA_NLDEV_CMD_GET, kMulti, 1).U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2).bytes());
  REQUIRE_FALSE(no_name.ok());
  CHECK(no_name.error().msg.find("RDMA_NLDEV_ATTR_DEV_NAME") != std::string::npos);
}

TEST_CASE("a pad attribute before a 64-bit value is skipped", "[rdma]") {
  // nla_put_u64_64bit inserts RDMA_NLDEV_ATTR_PAD (type 0) where u64
  // payloads must be 8-byte aligned.
  auto d = netlink::nldev::ParseDevice(Msg::Nldev(RDMA_NLDEV_CMD_GET, kMulti, 1)
                                           .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 2)
                                           .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_1")
                                           .Raw(RDMA_NLDEV_ATTR_PAD, {})
                                           .U64(RDMA_NLDEV_ATTR_NODE_GUID, 0xabcdef0123456789ULL)
                                           .bytes());
  REQUIRE(d.ok());
  CHECK(d->node_guid == "abcd:ef01:2345:6789");
}

TEST_CASE("a port dump gives the netdev when the kernel sends it and zero when it does not", "[rdma]") {
  Reply r = ReadAll(
      {Datagram({PortMsg(12, 1, "erdma_0", 5, "eth1"), PortMsg(12, 4, "rxe0", 0, ""), Done(12)})}, 12);
  REQUIRE(r.complete);
  REQUIRE(r.messages.size() == 2);
  auto with = netlink::nldev::ParsePort(r.messages[0]);
  auto without = netlink::nldev::ParsePort(r.messages[1]);
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  CHECK(*with == RdmaPort{1, "erdma_0", 1, 5, "eth1", 4, 5});
  CHECK(*without == RdmaPort{4, "rxe0", 1, 0, "", 4, 5});
}

TEST_CASE("a port answer to a single query comes with type GET and parses too", "[rdma]") {
  auto p = netlink::nldev::ParsePort(Msg::Nldev(RDMA_NLDEV_CMD_GET, 0, 1)
                                         .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                                         .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_0")
                                         .U32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
                                         .bytes());
  REQUIRE(p.ok());
  CHECK(p->port == 1);
  auto no_port = netlink::nldev::ParsePort(Msg::Nldev(RDMA_NLDEV_CMD_PORT_GET, 0, 1)
                                               .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                                               .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_0")
                                               .bytes());
  REQUIRE_FALSE(no_port.ok());
  CHECK(no_port.error().msg.find("RDMA_NLDEV_ATTR_PORT_INDEX") != std::string::npos);
}

TEST_CASE("an NLMSG_ERROR gives the errno and the extended ACK text", "[rdma]") {
  Reply r = ReadAll({Error(13, EOPNOTSUPP, "Device cannot be moved")}, 13);
  CHECK(r.complete);
  CHECK(r.error == EOPNOTSUPP);
  CHECK(r.extack == "Device cannot be moved");
  CHECK(r.messages.empty());
}

TEST_CASE("a plain ACK completes a command with no error", "[rdma]") {
  Reply r = ReadAll({Error(14, 0)}, 14);
  CHECK(r.complete);
  CHECK(r.error == 0);
  CHECK(r.extack.empty());
}

TEST_CASE("a query answer and its ACK in separate datagrams complete only at the ACK", "[rdma]") {
  Reply r;
  const Bytes answer =
      Msg::Nldev(RDMA_NLDEV_CMD_SYS_GET, 0, 15).U8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 0).bytes();
  REQUIRE(netlink::nldev::ReadDatagram(answer, 15, kPortid, r).ok());
  CHECK_FALSE(r.complete);
  REQUIRE(netlink::nldev::ReadDatagram(Error(15, 0), 15, kPortid, r).ok());
  CHECK(r.complete);
  REQUIRE(r.messages.size() == 1);
  CHECK(netlink::nldev::ParseSysGet(r.messages[0]).value() == NetnsMode::kExclusive);
}

TEST_CASE("a dump that fails part way ends with the errno of its NLMSG_DONE", "[rdma]") {
  Reply r = ReadAll({Datagram({DeviceMsg(16, 1, "erdma_0", 1)}), Done(16, -ENOBUFS)}, 16);
  CHECK(r.complete);
  CHECK(r.error == ENOBUFS);
}

TEST_CASE("a dump message marked NLM_F_DUMP_INTR marks the whole reply interrupted", "[rdma]") {
  Bytes interrupted = Msg::Nldev(RDMA_NLDEV_CMD_GET, kMulti | NLM_F_DUMP_INTR, 17)
                          .U32(RDMA_NLDEV_ATTR_DEV_INDEX, 1)
                          .Str(RDMA_NLDEV_ATTR_DEV_NAME, "erdma_0")
                          .bytes();
  Reply r = ReadAll({Datagram({interrupted, Done(17)})}, 17);
  CHECK(r.complete);
  CHECK(r.interrupted);
}

TEST_CASE("an answer with another sequence number or port is refused with EPROTO", "[rdma]") {
  Reply r;
  auto seq =
      netlink::nldev::ReadDatagram(Datagram({DeviceMsg(99, 1, "erdma_0", 1), Done(99)}), 18, kPortid, r);
  REQUIRE_FALSE(seq.ok());
  CHECK(seq.error().sys_errno == EPROTO);
  CHECK(r.messages.empty());
  Msg other_port(NLMSG_DONE, kMulti, 18, kPortid + 1);
  auto port = netlink::nldev::ReadDatagram(other_port.bytes(), 18, kPortid, r);
  REQUIRE_FALSE(port.ok());
  CHECK(port.error().sys_errno == EPROTO);
}

TEST_CASE("messages after the one that completed the answer are ignored", "[rdma]") {
  Reply r = ReadAll({Datagram({Done(19), DeviceMsg(19, 1, "late", 1)})}, 19);
  CHECK(r.complete);
  CHECK(r.messages.empty());
}

TEST_CASE("every truncation of a device message is an error or a consistent prefix, never more", "[rdma]") {
  const Bytes whole = DeviceMsg(1, 7, "erdma_0", 0x02163efffe10f8b0ULL);
  for (size_t len = 0; len < whole.size(); ++len) {
    INFO("cut at " << len);
    // Cut, header untouched: the message claims more bytes than there are.
    Bytes cut(whole.begin(), whole.begin() + len);
    CHECK_FALSE(netlink::nldev::ParseDevice(cut).ok());
    Reply r;
    if (len > 0) CHECK_FALSE(netlink::nldev::ReadDatagram(cut, 1, kPortid, r).ok());
    CHECK(r.messages.empty());
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

TEST_CASE("malformed datagrams are errors", "[rdma]") {
  Reply r;
  SECTION("stray bytes after the last message") {
    Bytes d = DeviceMsg(1, 1, "erdma_0", 1);
    d.insert(d.end(), {1, 2, 3});
    CHECK_FALSE(netlink::nldev::ReadDatagram(d, 1, kPortid, r).ok());
  }
  SECTION("nlmsg_len smaller than a header") {
    Bytes d = Done(1);
    d[0] = 8;
    CHECK_FALSE(netlink::nldev::ReadDatagram(d, 1, kPortid, r).ok());
  }
  SECTION("an NLMSG_ERROR without its error code") {
    CHECK_FALSE(netlink::nldev::ReadDatagram(Msg(NLMSG_ERROR, 0, 1).bytes(), 1, kPortid, r).ok());
  }
  SECTION("an unknown control message") {
    CHECK_FALSE(netlink::nldev::ReadDatagram(Msg(7, 0, 1).bytes(), 1, kPortid, r).ok());
  }
  SECTION("an overrun") {
    auto s = netlink::nldev::ReadDatagram(Msg(NLMSG_OVERRUN, 0, 1).bytes(), 1, kPortid, r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().sys_errno == ENOBUFS);
  }
  CHECK_FALSE(r.complete);
}

TEST_CASE("a bare NLMSG_DONE without an error code still ends a dump cleanly", "[rdma]") {
  Reply r = ReadAll({Msg(NLMSG_DONE, kMulti, 2).bytes()}, 2);
  CHECK(r.complete);
  CHECK(r.error == 0);
}

TEST_CASE("a message at an odd address parses like an aligned one", "[rdma]") {
  const Bytes whole = PortMsg(1, 3, "erdma_2", 9, "eth2");
  Bytes shifted(whole.size() + 1);
  std::memcpy(shifted.data() + 1, whole.data(), whole.size());
  auto p = netlink::nldev::ParsePort(std::span<const uint8_t>(shifted).subspan(1));
  REQUIRE(p.ok());
  CHECK(*p == RdmaPort{3, "erdma_2", 1, 9, "eth2", 4, 5});
  Reply r;
  REQUIRE(netlink::nldev::ReadDatagram(std::span<const uint8_t>(shifted).subspan(1), 1, kPortid, r).ok());
  CHECK(r.messages.size() == 1);
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
    Reply r;
    (void)netlink::nldev::ReadDatagram(b, 1, kPortid, r);
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

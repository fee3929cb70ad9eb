// netlink::vfmsg: requests checked against the layout of
// include/uapi/linux/if_link.h and rtnetlink.h with the numbers written out
// (so a wrong enum or struct is caught) and walked by a reader of its own;
// answers laid out the way net/core/rtnetlink.c's rtnl_fill_vfinfo sends
// them.
#include "netlink/vf_codec.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "test/unit/netlink_msg.h"

namespace test_unit_vf_codec_test {

namespace {

using netlink::VfSettings;
using netlink::VfState;
using netlink_test::Bytes;
using netlink_test::Msg;
using netlink_test::PutU32;

// The kernel's numbers, written out.
constexpr uint16_t kRtmNewlink = 16;
constexpr uint16_t kRtmGetlink = 18;
constexpr uint16_t kRequestAck = 0x1 | 0x4;  // NLM_F_REQUEST | NLM_F_ACK
constexpr uint16_t kIflaAddress = 1;
constexpr uint16_t kIflaIfname = 3;
constexpr uint16_t kIflaNumVf = 21;
constexpr uint16_t kIflaVfinfoList = 22;
constexpr uint16_t kIflaExtMask = 29;
constexpr uint16_t kIflaVfInfo = 1;
constexpr uint16_t kVfMac = 1, kVfVlan = 2, kVfTxRate = 3, kVfSpoofchk = 4, kVfLinkState = 5, kVfRate = 6,
                   kVfRssQueryEn = 7, kVfStats = 8, kVfTrust = 9, kVfNodeGuid = 10, kVfPortGuid = 11,
                   kVfBroadcast = 13;
constexpr uint32_t kFilterVfSkipStats = 1 | 8;  // RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS

uint16_t U16At(const Bytes& b, size_t off) { return uint16_t(b.at(off) | b.at(off + 1) << 8); }
uint32_t U32At(const Bytes& b, size_t off) {
  return uint32_t(b.at(off)) | uint32_t(b.at(off + 1)) << 8 | uint32_t(b.at(off + 2)) << 16 |
         uint32_t(b.at(off + 3)) << 24;
}
uint64_t U64At(const Bytes& b, size_t off) {
  return uint64_t(U32At(b, off)) | uint64_t(U32At(b, off + 4)) << 32;
}

/// One attribute as a reader that shares nothing with the code under test sees it.
struct Attr {
  uint16_t type = 0;
  Bytes payload;
};

std::vector<Attr> Attrs(const Bytes& b, size_t off, size_t end) {
  std::vector<Attr> out;
  while (off < end) {
    REQUIRE(end - off >= 4);
    const uint16_t len = U16At(b, off);
    REQUIRE(len >= 4);
    REQUIRE(off + len <= end);
    out.push_back({uint16_t(U16At(b, off + 2) & 0x3fff), Bytes(b.begin() + off + 4, b.begin() + off + len)});
    off += (len + 3u) & ~3u;
  }
  CHECK(off == end);
  return out;
}
std::vector<Attr> Attrs(const Bytes& payload) { return Attrs(payload, 0, payload.size()); }

Bytes U32s(std::initializer_list<uint32_t> v) {
  Bytes b;
  for (uint32_t x : v) PutU32(b, x);
  return b;
}

/// struct ifla_vf_mac: vf, then 32 bytes of address.
Bytes VfMac(uint32_t vf, std::initializer_list<uint8_t> mac) {
  Bytes b = U32s({vf});
  Bytes m(32, 0);
  std::copy(mac.begin(), mac.end(), m.begin());
  b.insert(b.end(), m.begin(), m.end());
  return b;
}
/// struct ifla_vf_guid: vf, 4 bytes of padding, the u64.
Bytes VfGuid(uint32_t vf, uint64_t guid) {
  Bytes b = U32s({vf, 0});
  PutU32(b, uint32_t(guid));
  PutU32(b, uint32_t(guid >> 32));
  return b;
}

Msg LinkMsg(uint32_t seq = 7) {
  Msg m(kRtmNewlink, 0, seq);
  Bytes ifi(16, 0);
  ifi[4] = 9;  // ifi_index 9
  std::memcpy(m.Extra(ifi.size()), ifi.data(), ifi.size());
  return m;
}

void CheckBadMsg(const base::Result<std::vector<VfState>>& r, const std::string& needle) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().sys_errno == EBADMSG);
  CHECK(r.error().code == base::Code::kKernel);
  INFO(r.error().msg);
  CHECK(r.error().msg.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("the VF list request is RTM_GETLINK for the PF asking for VFs without their counters", "[vfmsg]") {
  const Bytes b = netlink::vfmsg::BuildGetLink(77, 12);
  REQUIRE(b.size() == 40);
  CHECK(U32At(b, 0) == 40);
  CHECK(U16At(b, 4) == kRtmGetlink);
  CHECK(U16At(b, 6) == kRequestAck);  // the ACK ends the answer: the socket waits for it
  CHECK(U32At(b, 8) == 77);
  CHECK(U32At(b, 12) == 0);
  CHECK(b[16] == 0);          // AF_UNSPEC
  CHECK(U32At(b, 20) == 12);  // ifi_index
  CHECK(U32At(b, 24) == 0);   // ifi_flags
  CHECK(U32At(b, 28) == 0);   // ifi_change
  auto attrs = Attrs(b, 32, b.size());
  REQUIRE(attrs.size() == 1);
  CHECK(attrs[0].type == kIflaExtMask);
  CHECK(attrs[0].payload == U32s({kFilterVfSkipStats}));
}

TEST_CASE("setting every VF member puts each kernel struct in IFLA_VF_INFO and the port GUID in a second one",
          "[vfmsg]") {
  VfSettings s;
  s.vf = 3;
  s.mac = "02:00:00:3B:00:01";
  s.vlan = netlink::VfVlan{100, 5};
  s.rate = netlink::VfRate{10, 2000};
  s.spoofchk = false;
  s.trust = true;
  s.link_state = netlink::kVfLinkStateDisable;
  s.node_guid = "00:11:22:33:44:55:66:77";
  s.port_guid = "88:99:aa:bb:cc:dd:ee:ff";
  auto built = netlink::vfmsg::BuildSetVf(5, 4, s);
  REQUIRE(built.ok());
  const Bytes& b = *built;
  CHECK(U32At(b, 0) == b.size());
  CHECK(U16At(b, 4) == kRtmNewlink);
  CHECK(U16At(b, 6) == kRequestAck);  // no CREATE/EXCL: this changes the PF, it makes nothing
  CHECK(U32At(b, 8) == 5);
  CHECK(U32At(b, 20) == 4);  // the PF's index
  auto top = Attrs(b, 32, b.size());
  REQUIRE(top.size() == 1);
  CHECK(top[0].type == kIflaVfinfoList);
  auto infos = Attrs(top[0].payload);
  REQUIRE(infos.size() == 2);
  CHECK(infos[0].type == kIflaVfInfo);
  CHECK(infos[1].type == kIflaVfInfo);

  std::map<uint16_t, Bytes> got;
  for (const Attr& a : Attrs(infos[0].payload)) got[a.type] = a.payload;
  CHECK(got.size() == 7);
  CHECK(got[kVfMac] == VfMac(3, {0x02, 0x00, 0x00, 0x3b, 0x00, 0x01}));
  CHECK(got[kVfVlan] == U32s({3, 100, 5}));
  CHECK(got[kVfRate] == U32s({3, 10, 2000}));
  CHECK(got[kVfSpoofchk] == U32s({3, 0}));
  CHECK(got[kVfTrust] == U32s({3, 1}));
  CHECK(got[kVfLinkState] == U32s({3, 2}));
  REQUIRE(got[kVfNodeGuid].size() == 16);
  CHECK(U32At(got[kVfNodeGuid], 0) == 3);
  CHECK(U64At(got[kVfNodeGuid], 8) == 0x0011223344556677ull);

  auto second = Attrs(infos[1].payload);
  REQUIRE(second.size() == 1);
  CHECK(second[0].type == kVfPortGuid);
  CHECK(second[0].payload == VfGuid(3, 0x8899aabbccddeeffull));
}

TEST_CASE("setting one VF member sends only that member", "[vfmsg]") {
  VfSettings s;
  s.vf = 0;
  s.spoofchk = true;
  auto b = netlink::vfmsg::BuildSetVf(1, 4, s);
  REQUIRE(b.ok());
  auto top = Attrs(*b, 32, b->size());
  REQUIRE(top.size() == 1);
  auto infos = Attrs(top[0].payload);
  REQUIRE(infos.size() == 1);
  auto inner = Attrs(infos[0].payload);
  REQUIRE(inner.size() == 1);
  CHECK(inner[0].type == kVfSpoofchk);
  CHECK(inner[0].payload == U32s({0, 1}));

  // Only a port GUID: one IFLA_VF_INFO holding it.
  VfSettings p;
  p.vf = 2;
  p.port_guid = "00:00:00:00:00:00:00:01";
  auto pb = netlink::vfmsg::BuildSetVf(1, 4, p);
  REQUIRE(pb.ok());
  auto pinfos = Attrs(Attrs(*pb, 32, pb->size()).at(0).payload);
  REQUIRE(pinfos.size() == 1);
  auto pinner = Attrs(pinfos[0].payload);
  REQUIRE(pinner.size() == 1);
  CHECK(pinner[0].type == kVfPortGuid);
  CHECK(pinner[0].payload == VfGuid(2, 1));
}

TEST_CASE("VF settings that the kernel could not take are refused before anything is sent", "[vfmsg]") {
  VfSettings empty;
  empty.vf = 1;
  auto e = netlink::vfmsg::BuildSetVf(1, 4, empty);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().sys_errno == EINVAL);

  for (const char* mac : {"02:00:00:00:00", "02:00:00:00:00:0g", "02-00-00-00-00-01", ""}) {
    VfSettings s;
    s.mac = mac;
    auto r = netlink::vfmsg::BuildSetVf(1, 4, s);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().sys_errno == EINVAL);
  }
  VfSettings g;
  g.node_guid = "00:11:22:33:44:55:66";
  auto r = netlink::vfmsg::BuildSetVf(1, 4, g);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().msg.find("node GUID") != std::string::npos);
}

TEST_CASE("GUIDs read and print first byte first", "[vfmsg]") {
  CHECK(netlink::vfmsg::FormatGuid(0x0011223344556677ull) == "00:11:22:33:44:55:66:77");
  CHECK(netlink::vfmsg::ParseGuid("00:11:22:33:44:55:66:77") == 0x0011223344556677ull);
  CHECK(netlink::vfmsg::ParseGuid("FF:11:22:33:44:55:66:77") == 0xff11223344556677ull);
  CHECK_FALSE(netlink::vfmsg::ParseGuid("00:11:22:33:44:55:66"));
  CHECK_FALSE(netlink::vfmsg::ParseGuid("00:11:22:33:44:55:66:7x"));
  CHECK_FALSE(netlink::vfmsg::ParseGuid("00-11:22:33:44:55:66:77"));
}

TEST_CASE("a PF's answer yields its VFs: every member of one, the defaults of one that reports little",
          "[vfmsg]") {
  Msg m = LinkMsg();
  m.Str(kIflaIfname, "ens1f0");
  m.Raw(kIflaAddress, {0xb8, 0x59, 0x9f, 0x00, 0x00, 0x10});
  m.U32(kIflaNumVf, 2);
  nlattr* list = m.Begin(kIflaVfinfoList);
  nlattr* vf0 = m.Begin(kIflaVfInfo);
  m.Raw(kVfMac, VfMac(0, {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}));
  m.Raw(kVfBroadcast, Bytes(32, 0xff));
  m.Raw(kVfVlan, U32s({0, 100, 3}));
  m.Raw(kVfTxRate, U32s({0, 999}));  // the old attribute; IFLA_VF_RATE wins
  m.Raw(kVfRate, U32s({0, 10, 2000}));
  m.Raw(kVfSpoofchk, U32s({0, 1}));
  m.Raw(kVfLinkState, U32s({0, 2}));
  m.Raw(kVfRssQueryEn, U32s({0, 0xffffffff}));
  m.Raw(kVfTrust, U32s({0, 0}));
  nlattr* stats = m.Begin(kVfStats);
  m.U64(0, 12345);
  m.End(stats);
  m.End(vf0);
  nlattr* vf1 = m.Begin(kIflaVfInfo);
  m.Raw(kVfMac, VfMac(1, {}));
  m.Raw(kVfTxRate, U32s({1, 500}));
  m.Raw(kVfSpoofchk, U32s({1, 0xffffffff}));  // the driver does not say
  m.Raw(kVfTrust, U32s({1, 0xffffffff}));
  m.End(vf1);
  m.End(list);

  auto vfs = netlink::vfmsg::ParseVfList(m.bytes());
  REQUIRE(vfs.ok());
  REQUIRE(vfs->size() == 2);
  VfState want0;
  want0.vf = 0;
  want0.mac = "02:00:00:00:00:0a";
  want0.vlan = 100;
  want0.qos = 3;
  want0.min_tx_rate = 10;
  want0.max_tx_rate = 2000;
  want0.spoofchk = true;
  want0.trust = false;
  want0.link_state = 2;
  CHECK((*vfs)[0] == want0);
  VfState want1;
  want1.vf = 1;
  want1.mac = "00:00:00:00:00:00";
  want1.max_tx_rate = 500;
  CHECK((*vfs)[1] == want1);
}

TEST_CASE("an InfiniBand PF's VFs have GUIDs and no Ethernet MAC", "[vfmsg]") {
  Msg m = LinkMsg();
  m.Raw(kIflaAddress, Bytes(20, 0x80));  // INFINIBAND_ALEN
  nlattr* list = m.Begin(kIflaVfinfoList);
  nlattr* vf = m.Begin(kIflaVfInfo);
  m.Raw(kVfMac, VfMac(4, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80}));
  m.Raw(kVfLinkState, U32s({4, 0}));
  m.Raw(kVfNodeGuid, VfGuid(4, 0x0011223344556677ull));
  m.Raw(kVfPortGuid, VfGuid(4, 0x8899aabbccddeeffull));
  m.End(vf);
  m.End(list);
  auto vfs = netlink::vfmsg::ParseVfList(m.bytes());
  REQUIRE(vfs.ok());
  REQUIRE(vfs->size() == 1);
  CHECK((*vfs)[0].vf == 4);
  CHECK((*vfs)[0].mac.empty());
  CHECK((*vfs)[0].node_guid == "00:11:22:33:44:55:66:77");
  CHECK((*vfs)[0].port_guid == "88:99:aa:bb:cc:dd:ee:ff");
  CHECK((*vfs)[0].link_state == 0u);
}

TEST_CASE("a link without IFLA_VFINFO_LIST has no VFs", "[vfmsg]") {
  Msg m = LinkMsg();
  m.Str(kIflaIfname, "veth0");
  m.Raw(kIflaAddress, {2, 0, 0, 0, 0, 1});
  auto vfs = netlink::vfmsg::ParseVfList(m.bytes());
  REQUIRE(vfs.ok());
  CHECK(vfs->empty());
}

TEST_CASE("a malformed PF answer is an error, never a read outside the message", "[vfmsg]") {
  SECTION("an attribute cut short inside IFLA_VF_INFO") {
    Msg m = LinkMsg();
    nlattr* list = m.Begin(kIflaVfinfoList);
    nlattr* vf = m.Begin(kIflaVfInfo);
    m.Raw(kVfMac, VfMac(0, {}));
    m.Raw(kVfVlan, U32s({0, 1, 0}));
    m.End(vf);
    m.End(list);
    Bytes b = m.bytes();
    // The VLAN attribute claims 4 bytes more than its nest holds.
    const size_t vlan_at = b.size() - 16;
    REQUIRE(U16At(b, vlan_at + 2) == kVfVlan);
    b[vlan_at] = 20;
    CheckBadMsg(netlink::vfmsg::ParseVfList(b), "truncated attribute");
  }
  SECTION("a struct shorter than the kernel's") {
    Msg m = LinkMsg();
    nlattr* list = m.Begin(kIflaVfinfoList);
    nlattr* vf = m.Begin(kIflaVfInfo);
    m.Raw(kVfMac, VfMac(0, {}));
    m.Raw(kVfRate, U32s({0, 1}));
    m.End(vf);
    m.End(list);
    CheckBadMsg(netlink::vfmsg::ParseVfList(m.bytes()),
                "IFLA_VF_INFO: attribute 6 has a bad payload (8 bytes)");
  }
  SECTION("a VF without its MAC, which carries the VF number") {
    Msg m = LinkMsg();
    nlattr* list = m.Begin(kIflaVfinfoList);
    nlattr* vf = m.Begin(kIflaVfInfo);
    m.Raw(kVfVlan, U32s({0, 1, 0}));
    m.End(vf);
    m.End(list);
    CheckBadMsg(netlink::vfmsg::ParseVfList(m.bytes()), "without IFLA_VF_MAC");
  }
  SECTION("another message type") {
    Msg m(kRtmGetlink, 0, 1);
    Bytes ifi(16, 0);
    std::memcpy(m.Extra(ifi.size()), ifi.data(), ifi.size());
    CheckBadMsg(netlink::vfmsg::ParseVfList(m.bytes()), "expected RTM_NEWLINK");
  }
  SECTION("every shorter length of a good answer") {
    Msg m = LinkMsg();
    m.Raw(kIflaAddress, {2, 0, 0, 0, 0, 1});
    nlattr* list = m.Begin(kIflaVfinfoList);
    nlattr* vf = m.Begin(kIflaVfInfo);
    m.Raw(kVfMac, VfMac(0, {}));
    m.Raw(kVfRate, U32s({0, 1, 2}));
    m.End(vf);
    m.End(list);
    const Bytes full = m.bytes();
    for (size_t n = 0; n < full.size(); ++n) {
      INFO("cut at " << n);
      // The bytes handed over end at n; nlmsg_len claims the whole message.
      Bytes cut(full.begin(), full.begin() + n);
      CHECK_FALSE(netlink::vfmsg::ParseVfList(cut).ok());
      // nlmsg_len agrees with the cut: the attributes themselves are short.
      if (n >= 32) {
        Bytes shortened = cut;
        shortened[0] = uint8_t(n);
        shortened[1] = uint8_t(n >> 8);
        auto r = netlink::vfmsg::ParseVfList(shortened);
        if (!r.ok()) CHECK(r.error().sys_errno == EBADMSG);
      }
    }
  }
}

}  // namespace test_unit_vf_codec_test

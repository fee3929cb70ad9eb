#include "netlink/vf_codec.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/escape.h"
#include "netlink/raw_message.h"

namespace netlink::vfmsg {
namespace {

using base::Error;
using base::Result;

constexpr size_t kEthAlen = 6;
constexpr uint32_t kUnknown = 0xffffffff;  // rtnl_fill_vfinfo's -1: "the driver did not say"

Error Malformed(const std::string& why) {
  return Error(base::Code::kKernel, "malformed rtnetlink reply: " + why, {}, EBADMSG);
}

Error BadRequest(const std::string& why) { return Error(base::Code::kKernel, why, {}, EINVAL); }

/// "aa:bb:..." of exactly `n` bytes.
std::optional<std::vector<uint8_t>> ParseHexBytes(std::string_view s, size_t n) {
  if (n == 0 || s.size() != n * 3 - 1) return std::nullopt;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && s[i * 3 - 1] != ':') return std::nullopt;
    const int hi = base::HexValue(s[i * 3]);
    const int lo = base::HexValue(s[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return out;
}

constexpr size_t kLinkAttrs = IFLA_VFINFO_LIST + 1;    // the RTM_NEWLINK attributes read below
constexpr size_t kVfAttrs = IFLA_VF_IB_PORT_GUID + 1;  // the IFLA_VF_INFO members read below
static_assert(IFLA_ADDRESS < kLinkAttrs && IFLA_VF_MAC < kVfAttrs && IFLA_VF_TRUST < kVfAttrs);

/// The payload of each attribute the parsers read (the kernel's structs as minimum sizes, like its own
/// ifla_vf_policy); the others (NLA_UNSPEC) are skipped.
const std::array<nla_policy, kLinkAttrs> kLinkPolicy = [] {
  std::array<nla_policy, kLinkAttrs> p{};
  p[IFLA_ADDRESS] = raw::PolicyBinary();
  p[IFLA_VFINFO_LIST] = raw::PolicyNested();
  return p;
}();

const std::array<nla_policy, kVfAttrs> kVfPolicy = [] {
  std::array<nla_policy, kVfAttrs> p{};
  p[IFLA_VF_MAC] = raw::PolicyStruct(sizeof(ifla_vf_mac));
  p[IFLA_VF_VLAN] = raw::PolicyStruct(sizeof(ifla_vf_vlan));
  p[IFLA_VF_TX_RATE] = raw::PolicyStruct(sizeof(ifla_vf_tx_rate));
  p[IFLA_VF_RATE] = raw::PolicyStruct(sizeof(ifla_vf_rate));
  p[IFLA_VF_SPOOFCHK] = raw::PolicyStruct(sizeof(ifla_vf_spoofchk));
  p[IFLA_VF_TRUST] = raw::PolicyStruct(sizeof(ifla_vf_trust));
  p[IFLA_VF_LINK_STATE] = raw::PolicyStruct(sizeof(ifla_vf_link_state));
  p[IFLA_VF_IB_NODE_GUID] = raw::PolicyStruct(sizeof(ifla_vf_guid));
  p[IFLA_VF_IB_PORT_GUID] = raw::PolicyStruct(sizeof(ifla_vf_guid));
  return p;
}();

/// The kernel struct in `attr`, validated by its policy entry to be at least that big.
template <typename T>
T Struct(const nlattr* attr) {
  T v;
  std::memcpy(&v, nla_data(attr), sizeof v);
  return v;
}

/// Where the payload of the nest `attr` lies in `base`, for raw::WalkAttrs and raw::IndexAttrs.
struct Run {
  size_t off;
  size_t end;
};
Run PayloadOf(const uint8_t* base, const nlattr* attr) {
  const auto off = static_cast<size_t>(static_cast<const uint8_t*>(nla_data(attr)) - base);
  return {off, off + static_cast<size_t>(nla_len(attr))};
}

/// An attribute holding the kernel struct `v` as it is.
template <typename T>
void PutStruct(raw::Request& r, uint16_t type, const T& v) {
  r.PutBytes(type, &v, sizeof v);
}

std::optional<bool> Setting(uint32_t v) {
  if (v == kUnknown) return std::nullopt;
  return v != 0;
}

/// One IFLA_VF_INFO nest of the message at `base`.
Result<VfState> ParseVfInfo(const uint8_t* base, const nlattr* info, size_t addr_len) {
  std::array<const nlattr*, kVfAttrs> tb{};
  const Run run = PayloadOf(base, info);
  if (auto problem = raw::IndexAttrs(base, run.off, run.end, kVfPolicy, tb))
    return Malformed("IFLA_VF_INFO: " + *problem);
  // rtnl_fill_vfinfo always sends the MAC; it is also where the VF number is.
  if (!tb[IFLA_VF_MAC]) return Malformed("IFLA_VF_INFO without IFLA_VF_MAC");
  VfState vf;
  const auto mac = Struct<ifla_vf_mac>(tb[IFLA_VF_MAC]);
  vf.vf = mac.vf;
  if (addr_len == kEthAlen) vf.mac = base::HexWithColons(mac.mac, kEthAlen);
  if (const nlattr* a = tb[IFLA_VF_VLAN]) {
    const auto v = Struct<ifla_vf_vlan>(a);
    vf.vlan = v.vlan;
    vf.qos = v.qos;
  }
  // IFLA_VF_RATE (min and max) wins over the older IFLA_VF_TX_RATE (max).
  if (const nlattr* a = tb[IFLA_VF_RATE]) {
    const auto r = Struct<ifla_vf_rate>(a);
    vf.min_tx_rate = r.min_tx_rate;
    vf.max_tx_rate = r.max_tx_rate;
  } else if (const nlattr* old = tb[IFLA_VF_TX_RATE]) {
    vf.max_tx_rate = Struct<ifla_vf_tx_rate>(old).rate;
  }
  if (const nlattr* a = tb[IFLA_VF_SPOOFCHK]) vf.spoofchk = Setting(Struct<ifla_vf_spoofchk>(a).setting);
  if (const nlattr* a = tb[IFLA_VF_TRUST]) vf.trust = Setting(Struct<ifla_vf_trust>(a).setting);
  if (const nlattr* a = tb[IFLA_VF_LINK_STATE]) vf.link_state = Struct<ifla_vf_link_state>(a).link_state;
  if (const nlattr* a = tb[IFLA_VF_IB_NODE_GUID]) vf.node_guid = FormatGuid(Struct<ifla_vf_guid>(a).guid);
  if (const nlattr* a = tb[IFLA_VF_IB_PORT_GUID]) vf.port_guid = FormatGuid(Struct<ifla_vf_guid>(a).guid);
  return vf;
}

}  // namespace

std::string FormatGuid(uint64_t guid) {
  std::array<uint8_t, 8> b{};
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  return base::HexWithColons(b.data(), b.size());
}

std::optional<uint64_t> ParseGuid(std::string_view text) {
  auto bytes = ParseHexBytes(text, 8);
  if (!bytes) return std::nullopt;
  uint64_t g = 0;
  for (uint8_t b : *bytes) g = (g << 8) | b;
  return g;
}

Bytes BuildGetLink(uint32_t seq, int pf_index) {
  raw::Request r(RTM_GETLINK, raw::kCommand, seq);
  if (auto* ifi = static_cast<ifinfomsg*>(r.PutExtraHeader(sizeof(ifinfomsg)))) {
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = pf_index;
  }
  r.PutU32(IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
  return std::move(r).Finish();
}

Result<Bytes> BuildSetVf(uint32_t seq, int pf_index, const VfSettings& s) {
  const std::string what = "VF settings (" + DescribeVfSettings(s) + ")";
  if (s.empty()) return BadRequest(what + ": nothing to set");
  std::optional<std::vector<uint8_t>> mac;
  if (s.mac) {
    mac = ParseHexBytes(*s.mac, kEthAlen);
    if (!mac) return BadRequest(what + ": the MAC " + *s.mac + " is not six hex bytes");
  }
  std::optional<uint64_t> node_guid, port_guid;
  if (s.node_guid && !(node_guid = ParseGuid(*s.node_guid)))
    return BadRequest(what + ": the node GUID " + *s.node_guid + " is not eight hex bytes");
  if (s.port_guid && !(port_guid = ParseGuid(*s.port_guid)))
    return BadRequest(what + ": the port GUID " + *s.port_guid + " is not eight hex bytes");

  raw::Request r(RTM_NEWLINK, raw::kCommand, seq);
  if (auto* ifi = static_cast<ifinfomsg*>(r.PutExtraHeader(sizeof(ifinfomsg)))) {
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = pf_index;
  }
  nlattr* list = r.BeginNest(IFLA_VFINFO_LIST);
  const bool first_info = mac || s.vlan || s.rate || s.spoofchk || s.trust || s.link_state || node_guid;
  if (first_info) {
    nlattr* info = r.BeginNest(IFLA_VF_INFO);
    if (mac) {
      ifla_vf_mac m{};
      m.vf = s.vf;
      std::memcpy(m.mac, mac->data(), mac->size());
      PutStruct(r, IFLA_VF_MAC, m);
    }
    if (s.vlan) PutStruct(r, IFLA_VF_VLAN, ifla_vf_vlan{s.vf, s.vlan->vlan, s.vlan->qos});
    if (s.rate) PutStruct(r, IFLA_VF_RATE, ifla_vf_rate{s.vf, s.rate->min_tx_rate, s.rate->max_tx_rate});
    if (s.spoofchk) PutStruct(r, IFLA_VF_SPOOFCHK, ifla_vf_spoofchk{s.vf, *s.spoofchk ? 1u : 0u});
    if (s.trust) PutStruct(r, IFLA_VF_TRUST, ifla_vf_trust{s.vf, *s.trust ? 1u : 0u});
    if (s.link_state) PutStruct(r, IFLA_VF_LINK_STATE, ifla_vf_link_state{s.vf, *s.link_state});
    if (node_guid) {
      // Built member by member: ifla_vf_guid has padding, which stays zero.
      ifla_vf_guid g{};
      g.vf = s.vf;
      g.guid = *node_guid;
      PutStruct(r, IFLA_VF_IB_NODE_GUID, g);
    }
    r.EndNest(info);
  }
  if (port_guid) {
    nlattr* info = r.BeginNest(IFLA_VF_INFO);
    ifla_vf_guid g{};
    g.vf = s.vf;
    g.guid = *port_guid;
    PutStruct(r, IFLA_VF_IB_PORT_GUID, g);
    r.EndNest(info);
  }
  r.EndNest(list);
  Bytes out = std::move(r).Finish();
  if (out.empty()) return BadRequest(what + ": does not fit in one request");
  return out;
}

Result<std::vector<VfState>> ParseVfList(std::span<const uint8_t> msg) {
  Bytes storage;
  if (auto problem = raw::CopyMessage(msg, NLMSG_HDRLEN, storage))
    return Malformed("RTM_NEWLINK: " + *problem);
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(storage.data());
  if (hdr->nlmsg_type != RTM_NEWLINK)
    return Malformed("expected RTM_NEWLINK, got message type " + std::to_string(hdr->nlmsg_type));
  constexpr size_t kAttrsAt = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  if (hdr->nlmsg_len < kAttrsAt)
    return Malformed("RTM_NEWLINK of " + std::to_string(hdr->nlmsg_len) + " bytes has no whole ifinfomsg");
  const uint8_t* base = storage.data();

  std::array<const nlattr*, kLinkAttrs> tb{};
  if (auto problem = raw::IndexAttrs(base, kAttrsAt, storage.size(), kLinkPolicy, tb))
    return Malformed("RTM_NEWLINK: " + *problem);
  const size_t addr_len = tb[IFLA_ADDRESS] ? static_cast<size_t>(nla_len(tb[IFLA_ADDRESS])) : 0;
  std::vector<VfState> out;
  const nlattr* list = tb[IFLA_VFINFO_LIST];
  if (!list) return out;
  const Run run = PayloadOf(base, list);
  std::optional<Error> bad;
  auto problem = raw::WalkAttrs(base, run.off, run.end, [&](const nlattr* a) -> std::optional<std::string> {
    if (nla_type(a) != IFLA_VF_INFO) return std::nullopt;
    auto vf = ParseVfInfo(base, a, addr_len);
    if (!vf.ok()) {
      bad = std::move(vf).error();
      return bad->msg;
    }
    out.push_back(std::move(vf).value());
    return std::nullopt;
  });
  if (bad) return std::move(*bad);
  if (problem) return Malformed("IFLA_VFINFO_LIST: " + *problem);
  return out;
}

}  // namespace netlink::vfmsg

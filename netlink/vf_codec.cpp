#include "netlink/vf_codec.h"

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "netlink/mnl_request.h"

namespace netlink::vfmsg {
namespace {

using base::Error;
using base::Result;
using base::Status;

constexpr size_t kEthAlen = 6;
constexpr uint32_t kUnknown = 0xffffffff;  // rtnl_fill_vfinfo's -1: "the driver did not say"

Error Malformed(const std::string& why) {
  return Error(base::Code::kKernel, "malformed rtnetlink reply: " + why, {}, EBADMSG);
}

Error BadRequest(const std::string& why) { return Error(base::Code::kKernel, why, {}, EINVAL); }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// "aa:bb:..." of exactly `n` bytes.
std::optional<std::vector<uint8_t>> ParseHexBytes(std::string_view s, size_t n) {
  if (n == 0 || s.size() != n * 3 - 1) return std::nullopt;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && s[i * 3 - 1] != ':') return std::nullopt;
    const int hi = HexDigit(s[i * 3]);
    const int lo = HexDigit(s[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return out;
}

std::string FormatHexBytes(const uint8_t* p, size_t n) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, i ? ":%02x" : "%02x", p[i]);
    out += buf;
  }
  return out;
}

/// Walks the attributes in [p, p + len), each checked to lie whole inside.
Status Walk(const uint8_t* p, size_t len, const std::string& where,
            const std::function<Status(const nlattr*)>& visit) {
  size_t off = 0;
  while (off < len) {
    const auto* attr = reinterpret_cast<const nlattr*>(p + off);
    // mnl_attr_ok: a whole header, nla_len covering it and within the rest.
    if (len - off < sizeof(nlattr) || !mnl_attr_ok(attr, static_cast<int>(len - off)))
      return Malformed(where + ": truncated attribute at offset " + std::to_string(off));
    RETURN_IF_ERROR(visit(attr));
    off += MNL_ALIGN(attr->nla_len);
  }
  return base::Ok();
}

Status WalkNested(const nlattr* nest, const std::string& where,
                  const std::function<Status(const nlattr*)>& visit) {
  return Walk(static_cast<const uint8_t*>(mnl_attr_get_payload(nest)), mnl_attr_get_payload_len(nest), where,
              visit);
}

/// Copies the kernel struct out of `attr`; its payload must be at least that big.
template <typename T>
Result<T> Struct(const nlattr* attr, const char* name) {
  if (mnl_attr_get_payload_len(attr) < sizeof(T))
    return Malformed(std::string(name) + " of " + std::to_string(mnl_attr_get_payload_len(attr)) +
                     " bytes, expected " + std::to_string(sizeof(T)));
  T v;
  std::memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
  return v;
}

std::optional<bool> Setting(uint32_t v) {
  if (v == kUnknown) return std::nullopt;
  return v != 0;
}

/// One IFLA_VF_INFO nest.
Result<VfState> ParseVfInfo(const nlattr* info, size_t addr_len) {
  VfState vf;
  bool have_mac = false;
  bool have_rate = false;
  RETURN_IF_ERROR(WalkNested(info, "IFLA_VF_INFO", [&](const nlattr* a) -> Status {
    switch (mnl_attr_get_type(a)) {
      case IFLA_VF_MAC: {
        ASSIGN_OR_RETURN(auto m, Struct<ifla_vf_mac>(a, "IFLA_VF_MAC"));
        vf.vf = m.vf;
        if (addr_len == kEthAlen) vf.mac = FormatHexBytes(m.mac, kEthAlen);
        have_mac = true;
        break;
      }
      case IFLA_VF_VLAN: {
        ASSIGN_OR_RETURN(auto v, Struct<ifla_vf_vlan>(a, "IFLA_VF_VLAN"));
        vf.vlan = v.vlan;
        vf.qos = v.qos;
        break;
      }
      case IFLA_VF_TX_RATE: {
        ASSIGN_OR_RETURN(auto r, Struct<ifla_vf_tx_rate>(a, "IFLA_VF_TX_RATE"));
        if (!have_rate) vf.max_tx_rate = r.rate;
        break;
      }
      case IFLA_VF_RATE: {
        ASSIGN_OR_RETURN(auto r, Struct<ifla_vf_rate>(a, "IFLA_VF_RATE"));
        vf.min_tx_rate = r.min_tx_rate;
        vf.max_tx_rate = r.max_tx_rate;
        have_rate = true;
        break;
      }
      case IFLA_VF_SPOOFCHK: {
        ASSIGN_OR_RETURN(auto s, Struct<ifla_vf_spoofchk>(a, "IFLA_VF_SPOOFCHK"));
        vf.spoofchk = Setting(s.setting);
        break;
      }
      case IFLA_VF_TRUST: {
        ASSIGN_OR_RETURN(auto t, Struct<ifla_vf_trust>(a, "IFLA_VF_TRUST"));
        vf.trust = Setting(t.setting);
        break;
      }
      case IFLA_VF_LINK_STATE: {
        ASSIGN_OR_RETURN(auto l, Struct<ifla_vf_link_state>(a, "IFLA_VF_LINK_STATE"));
        vf.link_state = l.link_state;
        break;
      }
      case IFLA_VF_IB_NODE_GUID: {
        ASSIGN_OR_RETURN(auto g, Struct<ifla_vf_guid>(a, "IFLA_VF_IB_NODE_GUID"));
        vf.node_guid = FormatGuid(g.guid);
        break;
      }
      case IFLA_VF_IB_PORT_GUID: {
        ASSIGN_OR_RETURN(auto g, Struct<ifla_vf_guid>(a, "IFLA_VF_IB_PORT_GUID"));
        vf.port_guid = FormatGuid(g.guid);
        break;
      }
      default: break;
    }
    return base::Ok();
  }));
  // rtnl_fill_vfinfo always sends the MAC; it is also where the VF number is.
  if (!have_mac) return Malformed("IFLA_VF_INFO without IFLA_VF_MAC");
  return vf;
}

}  // namespace

std::string FormatGuid(uint64_t guid) {
  std::array<uint8_t, 8> b{};
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  return FormatHexBytes(b.data(), b.size());
}

std::optional<uint64_t> ParseGuid(std::string_view text) {
  auto bytes = ParseHexBytes(text, 8);
  if (!bytes) return std::nullopt;
  uint64_t g = 0;
  for (uint8_t b : *bytes) g = (g << 8) | b;
  return g;
}

Bytes BuildGetLink(uint32_t seq, int pf_index) {
  mnl::Request r(RTM_GETLINK, mnl::kCommand, seq);
  auto* ifi = static_cast<ifinfomsg*>(r.PutExtraHeader(sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = pf_index;
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

  mnl::Request r(RTM_NEWLINK, mnl::kCommand, seq);
  auto* ifi = static_cast<ifinfomsg*>(r.PutExtraHeader(sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = pf_index;
  nlattr* list = r.BeginNest(IFLA_VFINFO_LIST);
  const bool first_info = mac || s.vlan || s.rate || s.spoofchk || s.trust || s.link_state || node_guid;
  if (first_info) {
    nlattr* info = r.BeginNest(IFLA_VF_INFO);
    if (mac) {
      ifla_vf_mac m{};
      m.vf = s.vf;
      std::memcpy(m.mac, mac->data(), mac->size());
      r.PutBytes(IFLA_VF_MAC, &m, sizeof m);
    }
    if (s.vlan) {
      ifla_vf_vlan v{s.vf, s.vlan->vlan, s.vlan->qos};
      r.PutBytes(IFLA_VF_VLAN, &v, sizeof v);
    }
    if (s.rate) {
      ifla_vf_rate v{s.vf, s.rate->min_tx_rate, s.rate->max_tx_rate};
      r.PutBytes(IFLA_VF_RATE, &v, sizeof v);
    }
    if (s.spoofchk) {
      ifla_vf_spoofchk v{s.vf, *s.spoofchk ? 1u : 0u};
      r.PutBytes(IFLA_VF_SPOOFCHK, &v, sizeof v);
    }
    if (s.trust) {
      ifla_vf_trust v{s.vf, *s.trust ? 1u : 0u};
      r.PutBytes(IFLA_VF_TRUST, &v, sizeof v);
    }
    if (s.link_state) {
      ifla_vf_link_state v{s.vf, *s.link_state};
      r.PutBytes(IFLA_VF_LINK_STATE, &v, sizeof v);
    }
    if (node_guid) {
      ifla_vf_guid g{};
      g.vf = s.vf;
      g.guid = *node_guid;
      r.PutBytes(IFLA_VF_IB_NODE_GUID, &g, sizeof g);
    }
    r.EndNest(info);
  }
  if (port_guid) {
    nlattr* info = r.BeginNest(IFLA_VF_INFO);
    ifla_vf_guid g{};
    g.vf = s.vf;
    g.guid = *port_guid;
    r.PutBytes(IFLA_VF_IB_PORT_GUID, &g, sizeof g);
    r.EndNest(info);
  }
  r.EndNest(list);
  Bytes out = std::move(r).Finish();
  if (out.empty()) return BadRequest(what + ": does not fit in one request");
  return out;
}

Result<std::vector<VfState>> ParseVfList(std::span<const uint8_t> msg) {
  nlmsghdr hdr{};
  if (msg.size() < sizeof hdr)
    return Malformed("RTM_NEWLINK: " + std::to_string(msg.size()) + " bytes, shorter than a header");
  std::memcpy(&hdr, msg.data(), sizeof hdr);
  if (hdr.nlmsg_len < sizeof hdr || hdr.nlmsg_len > msg.size())
    return Malformed("RTM_NEWLINK: nlmsg_len " + std::to_string(hdr.nlmsg_len) + " with " +
                     std::to_string(msg.size()) + " bytes at hand");
  if (hdr.nlmsg_type != RTM_NEWLINK)
    return Malformed("expected RTM_NEWLINK, got message type " + std::to_string(hdr.nlmsg_type));
  const size_t attrs_at = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(ifinfomsg));
  if (hdr.nlmsg_len < attrs_at)
    return Malformed("RTM_NEWLINK of " + std::to_string(hdr.nlmsg_len) + " bytes has no whole ifinfomsg");
  // Copied: the caller's bytes need not be aligned for nlattr.
  const Bytes storage(msg.begin(), msg.begin() + hdr.nlmsg_len);

  size_t addr_len = 0;
  const nlattr* list = nullptr;
  RETURN_IF_ERROR(Walk(storage.data() + attrs_at, storage.size() - attrs_at, "RTM_NEWLINK",
                       [&](const nlattr* a) -> Status {
                         const uint16_t type = mnl_attr_get_type(a);
                         if (type == IFLA_ADDRESS) addr_len = mnl_attr_get_payload_len(a);
                         if (type == IFLA_VFINFO_LIST) list = a;
                         return base::Ok();
                       }));
  std::vector<VfState> out;
  if (!list) return out;
  RETURN_IF_ERROR(WalkNested(list, "IFLA_VFINFO_LIST", [&](const nlattr* a) -> Status {
    if (mnl_attr_get_type(a) != IFLA_VF_INFO) return base::Ok();
    ASSIGN_OR_RETURN(VfState vf, ParseVfInfo(a, addr_len));
    out.push_back(std::move(vf));
    return base::Ok();
  }));
  return out;
}

}  // namespace netlink::vfmsg

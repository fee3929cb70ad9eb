#include "netlink/rdma_codec.h"

#include <linux/netlink.h>
#include <net/if.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cerrno>
#include <cstdio>

#include "netlink/kernel_name.h"
#include "netlink/raw_message.h"

namespace netlink::nldev {
namespace {

using base::Error;
using base::Result;

constexpr size_t kDeviceNameMax = 64;   // IB_DEVICE_NAME_MAX, the NUL included
constexpr size_t kAttrTableSize = 128;  // covers every attribute read below
static_assert(RDMA_NLDEV_NET_NS_FD < kAttrTableSize && RDMA_NLDEV_ATTR_DEV_PROTOCOL < kAttrTableSize);

Error Malformed(const std::string& why) {
  return Error(base::Code::kKernel, "malformed RDMA netlink reply: " + why, {}, EBADMSG);
}

Error BadRequest(const std::string& why) { return Error(base::Code::kKernel, why, {}, EINVAL); }

/// A request of NLDEV command `op`; NLDEV messages have no family header.
raw::Request NldevRequest(uint16_t op, uint16_t flags, uint32_t seq) { return {MessageType(op), flags, seq}; }

using raw::kCommand;
using raw::kDump;

/// The payload of each attribute the parsers read; the others (NLA_UNSPEC) are skipped.
const std::array<nla_policy, kAttrTableSize> kPolicy = [] {
  std::array<nla_policy, kAttrTableSize> p{};
  p[RDMA_NLDEV_ATTR_DEV_INDEX] = raw::PolicyU32();
  p[RDMA_NLDEV_ATTR_PORT_INDEX] = raw::PolicyU32();
  p[RDMA_NLDEV_ATTR_NDEV_INDEX] = raw::PolicyU32();
  p[RDMA_NLDEV_ATTR_NODE_GUID] = raw::PolicyU64();
  p[RDMA_NLDEV_ATTR_PORT_STATE] = raw::PolicyU8();
  p[RDMA_NLDEV_ATTR_PORT_PHYS_STATE] = raw::PolicyU8();
  p[RDMA_NLDEV_SYS_ATTR_NETNS_MODE] = raw::PolicyU8();
  p[RDMA_NLDEV_ATTR_DEV_NAME] = raw::PolicyString();
  p[RDMA_NLDEV_ATTR_NDEV_NAME] = raw::PolicyString();
  p[RDMA_NLDEV_ATTR_DEV_PROTOCOL] = raw::PolicyString();
  return p;
}();

/// One message's attributes by type, pointing into `storage`.
struct Attrs {
  Bytes storage;
  std::array<const nlattr*, kAttrTableSize> tb{};

  const nlattr* operator[](uint16_t type) const { return tb[type]; }
  uint32_t U32(uint16_t type) const { return nla_get_u32(tb[type]); }
  std::string Str(uint16_t type) const { return raw::AttrString(tb[type]); }
};

/// Checks the header of one message of type `op` (or `alt_op`) and indexes its attributes in a copy of it.
Result<Attrs> ParseMessage(std::span<const uint8_t> msg, const char* what, uint16_t op, uint16_t alt_op = 0) {
  Attrs a;
  if (auto problem = raw::CopyMessage(msg, NLMSG_HDRLEN, a.storage)) {
    return Malformed(std::string(what) + ": " + *problem);
  }
  const uint16_t type = reinterpret_cast<const nlmsghdr*>(a.storage.data())->nlmsg_type;
  if (type != MessageType(op) && (alt_op == 0 || type != MessageType(alt_op))) {
    return Malformed(std::string(what) + ": unexpected message type " + std::to_string(type));
  }
  if (auto problem = raw::IndexAttrs(a.storage.data(), NLMSG_HDRLEN, a.storage.size(), kPolicy, a.tb)) {
    return Malformed(std::string(what) + ": " + *problem);
  }
  return a;
}

Error Missing(const char* what, const char* attr) {
  return Malformed(std::string(what) + " without " + attr);
}

std::string StateName(uint8_t v, const std::array<const char*, 8>& names) {
  if (v < names.size() && names[v]) return names[v];
  return "UNKNOWN(" + std::to_string(v) + ")";
}

}  // namespace

uint16_t MessageType(uint16_t op) { return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)); }

Bytes BuildSysGet(uint32_t seq) { return NldevRequest(RDMA_NLDEV_CMD_SYS_GET, kCommand, seq).Finish(); }

Bytes BuildSysSet(uint32_t seq, NetnsMode mode) {
  auto r = NldevRequest(RDMA_NLDEV_CMD_SYS_SET, kCommand, seq);
  r.PutU8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, mode == NetnsMode::kShared ? 1 : 0);
  return std::move(r).Finish();
}

Bytes BuildDeviceDump(uint32_t seq) { return NldevRequest(RDMA_NLDEV_CMD_GET, kDump, seq).Finish(); }

Bytes BuildPortDump(uint32_t seq, uint32_t dev_index) {
  auto r = NldevRequest(RDMA_NLDEV_CMD_PORT_GET, kDump, seq);
  r.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  return std::move(r).Finish();
}

Bytes BuildMoveDevice(uint32_t seq, uint32_t dev_index, uint32_t netns_fd) {
  auto r = NldevRequest(RDMA_NLDEV_CMD_SET, kCommand, seq);
  r.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  r.PutU32(RDMA_NLDEV_NET_NS_FD, netns_fd);
  return std::move(r).Finish();
}

base::Result<Bytes> BuildNewLink(uint32_t seq, std::string_view name, std::string_view type,
                                 std::string_view netdev_name) {
  if (auto p = KernelNameProblem(name, "the RDMA device name", kDeviceNameMax)) return BadRequest(*p);
  // A '%' asks ib_core for a numbered name ("rxe%d"), which would leave us not knowing the name.
  if (name.find('%') != std::string_view::npos) {
    return BadRequest("the RDMA device name '" + std::string(name) + "' contains '%'");
  }
  if (auto p = KernelNameProblem(type, "the RDMA link type", IFNAMSIZ)) return BadRequest(*p);
  if (auto p = KernelNameProblem(netdev_name, "the netdev name", IFNAMSIZ)) return BadRequest(*p);
  auto r = NldevRequest(RDMA_NLDEV_CMD_NEWLINK, kCommand, seq);
  r.PutString(RDMA_NLDEV_ATTR_DEV_NAME, std::string(name));
  r.PutString(RDMA_NLDEV_ATTR_LINK_TYPE, std::string(type));
  r.PutString(RDMA_NLDEV_ATTR_NDEV_NAME, std::string(netdev_name));
  return std::move(r).Finish();
}

Bytes BuildDelLink(uint32_t seq, uint32_t dev_index) {
  auto r = NldevRequest(RDMA_NLDEV_CMD_DELLINK, kCommand, seq);
  r.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  return std::move(r).Finish();
}

base::Result<NetnsMode> ParseSysGet(std::span<const uint8_t> msg) {
  constexpr const char* kWhat = "RDMA_NLDEV_CMD_SYS_GET answer";
  ASSIGN_OR_RETURN(Attrs a, ParseMessage(msg, kWhat, RDMA_NLDEV_CMD_SYS_GET));
  const nlattr* mode = a[RDMA_NLDEV_SYS_ATTR_NETNS_MODE];
  if (!mode) return Missing(kWhat, "RDMA_NLDEV_SYS_ATTR_NETNS_MODE");
  switch (nla_get_u8(mode)) {
    case 0: return NetnsMode::kExclusive;
    case 1: return NetnsMode::kShared;
    default:
      return Malformed(std::string(kWhat) + ": unknown netns mode " + std::to_string(nla_get_u8(mode)));
  }
}

base::Result<RdmaDevice> ParseDevice(std::span<const uint8_t> msg) {
  constexpr const char* kWhat = "RDMA_NLDEV_CMD_GET message";
  ASSIGN_OR_RETURN(Attrs a, ParseMessage(msg, kWhat, RDMA_NLDEV_CMD_GET));
  if (!a[RDMA_NLDEV_ATTR_DEV_INDEX]) return Missing(kWhat, "RDMA_NLDEV_ATTR_DEV_INDEX");
  if (!a[RDMA_NLDEV_ATTR_DEV_NAME]) return Missing(kWhat, "RDMA_NLDEV_ATTR_DEV_NAME");
  RdmaDevice d;
  d.index = a.U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  d.name = a.Str(RDMA_NLDEV_ATTR_DEV_NAME);
  if (a[RDMA_NLDEV_ATTR_PORT_INDEX]) d.num_ports = a.U32(RDMA_NLDEV_ATTR_PORT_INDEX);
  if (const nlattr* guid = a[RDMA_NLDEV_ATTR_NODE_GUID]) d.node_guid = FormatGuid(nla_get_u64(guid));
  d.protocol = a.Str(RDMA_NLDEV_ATTR_DEV_PROTOCOL);
  return d;
}

base::Result<RdmaPort> ParsePort(std::span<const uint8_t> msg) {
  constexpr const char* kWhat = "RDMA_NLDEV_CMD_PORT_GET message";
  ASSIGN_OR_RETURN(Attrs a, ParseMessage(msg, kWhat, RDMA_NLDEV_CMD_PORT_GET, RDMA_NLDEV_CMD_GET));
  if (!a[RDMA_NLDEV_ATTR_DEV_INDEX]) return Missing(kWhat, "RDMA_NLDEV_ATTR_DEV_INDEX");
  if (!a[RDMA_NLDEV_ATTR_DEV_NAME]) return Missing(kWhat, "RDMA_NLDEV_ATTR_DEV_NAME");
  if (!a[RDMA_NLDEV_ATTR_PORT_INDEX]) return Missing(kWhat, "RDMA_NLDEV_ATTR_PORT_INDEX");
  RdmaPort p;
  p.dev_index = a.U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  p.dev_name = a.Str(RDMA_NLDEV_ATTR_DEV_NAME);
  p.port = a.U32(RDMA_NLDEV_ATTR_PORT_INDEX);
  if (a[RDMA_NLDEV_ATTR_NDEV_INDEX]) p.netdev_index = a.U32(RDMA_NLDEV_ATTR_NDEV_INDEX);
  p.netdev_name = a.Str(RDMA_NLDEV_ATTR_NDEV_NAME);
  if (const nlattr* s = a[RDMA_NLDEV_ATTR_PORT_STATE]) p.state = nla_get_u8(s);
  if (const nlattr* s = a[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]) p.phys_state = nla_get_u8(s);
  return p;
}

std::string FormatGuid(uint64_t guid) {
  char text[20];
  std::snprintf(text, sizeof text, "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48) & 0xffff,
                static_cast<unsigned>(guid >> 32) & 0xffff, static_cast<unsigned>(guid >> 16) & 0xffff,
                static_cast<unsigned>(guid) & 0xffff);
  return text;
}

std::string PortStateName(uint8_t state) {
  return StateName(state, {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", nullptr, nullptr});
}

std::string PhysStateName(uint8_t phys_state) {
  return StateName(phys_state, {nullptr, "SLEEP", "POLLING", "DISABLED", "PORT_CONFIGURATION_TRAINING",
                                "LINK_UP", "LINK_ERROR_RECOVERY", "PHY_TEST"});
}

}  // namespace netlink::nldev

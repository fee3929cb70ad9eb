#include "netlink/smc_codec.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smc.h>

#include <array>
#include <cerrno>

#include "netlink/raw_message.h"

namespace netlink {
namespace {

using smcnl::Bytes;
using smcnl::kUeidLen;

using base::Error;
using base::Result;

constexpr size_t kAttrTableSize = 16;          // covers every attribute read below
constexpr uint8_t kRequestVersion = 1;         // SMCR_GENL_FAMILY_VERSION = SMC_GENL_FAMILY_VERSION = 1
constexpr const char* kNotApplicable = "n/a";  // smc_pnet_set_nla's filler for the unused side
constexpr uint8_t kNoIbPort = 0xff;            // ... and its port
static_assert(SMC_PNETID_IBPORT < kAttrTableSize && SMC_NLA_EID_TABLE_ENTRY < kAttrTableSize);
static_assert(GENL_HDRLEN == 4);

using raw::kCommand;
using raw::kDump;

Error Malformed(const std::string& why) {
  return Error(base::Code::kKernel, "malformed generic netlink reply: " + why, {}, EBADMSG);
}

/// A generic netlink request: nlmsghdr typed by the family id, genlmsghdr.
raw::Request GenlRequest(uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq) {
  raw::Request r(family, flags, seq);
  if (auto* genl = static_cast<genlmsghdr*>(r.PutExtraHeader(sizeof(genlmsghdr)))) {
    genl->cmd = cmd;
    genl->version = kRequestVersion;
  }
  return r;
}

/// One message's attributes by type, pointing into `storage`.
struct Attrs {
  Bytes storage;
  std::array<const nlattr*, kAttrTableSize> tb{};

  const nlattr* operator[](uint16_t type) const { return tb[type]; }
  std::string Str(uint16_t type) const { return raw::AttrString(tb[type]); }
};

/// The payload of each attribute a parser reads, by type; the others (NLA_UNSPEC) are skipped.
using Policy = std::array<nla_policy, kAttrTableSize>;

const Policy kPnetPolicy = [] {
  Policy p{};
  p[SMC_PNETID_NAME] = raw::PolicyString();
  p[SMC_PNETID_ETHNAME] = raw::PolicyString();
  p[SMC_PNETID_IBNAME] = raw::PolicyString();
  p[SMC_PNETID_IBPORT] = raw::PolicyU8();
  return p;
}();

const Policy kUeidPolicy = [] {
  Policy p{};
  p[SMC_NLA_EID_TABLE_ENTRY] = raw::PolicyString();
  return p;
}();

/// Checks the headers of one message of type `type` and generic netlink command `cmd`, and indexes (in a copy
/// of it) its top-level attributes `policy` names.
Result<Attrs> ParseMessage(std::span<const uint8_t> msg, const char* what, uint16_t type, uint8_t cmd,
                           const Policy& policy) {
  constexpr size_t kHeaders = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(genlmsghdr));
  Attrs a;
  if (auto problem = raw::CopyMessage(msg, kHeaders, a.storage)) {
    return Malformed(std::string(what) + ": " + *problem);
  }
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(a.storage.data());
  if (hdr->nlmsg_type != type) {
    return Malformed(std::string(what) + ": unexpected message type " + std::to_string(hdr->nlmsg_type) +
                     " (expected " + std::to_string(type) + ")");
  }
  const auto* genl = static_cast<const genlmsghdr*>(nlmsg_data(hdr));
  if (genl->cmd != cmd) {
    return Malformed(std::string(what) + ": unexpected command " + std::to_string(genl->cmd) + " (expected " +
                     std::to_string(cmd) + ")");
  }
  if (auto problem = raw::IndexAttrs(a.storage.data(), kHeaders, a.storage.size(), policy, a.tb)) {
    return Malformed(std::string(what) + ": " + *problem);
  }
  return a;
}

Error Missing(const char* what, const char* attr) {
  return Malformed(std::string(what) + " without " + attr);
}

Result<Bytes> BuildUeidCommand(uint32_t seq, uint16_t family, uint8_t cmd, std::string_view ueid) {
  ASSIGN_OR_RETURN(std::string padded, NormalizeUeid(ueid));
  // The kernel compares all 32 bytes, trailing blanks as padding, and wants exactly 33 (the NUL included).
  padded.resize(kUeidLen, ' ');
  auto r = GenlRequest(family, cmd, kCommand, seq);
  r.PutString(SMC_NLA_EID_TABLE_ENTRY, padded);
  return std::move(r).Finish();
}

}  // namespace

namespace smcnl {

Bytes BuildPnetDump(uint32_t seq, uint16_t family) {
  return GenlRequest(family, SMC_PNETID_GET, kDump, seq).Finish();
}

base::Result<Bytes> BuildPnetAdd(uint32_t seq, uint16_t family, const PnetEntry& entry) {
  ASSIGN_OR_RETURN(const PnetEntry e, NormalizePnetEntry(entry));
  auto r = GenlRequest(family, SMC_PNETID_ADD, kCommand, seq);
  r.PutString(SMC_PNETID_NAME, e.pnet_id);
  if (!e.eth_name.empty()) {
    r.PutString(SMC_PNETID_ETHNAME, e.eth_name);
  } else {
    r.PutString(SMC_PNETID_IBNAME, e.ib_name);
    r.PutU8(SMC_PNETID_IBPORT, e.ib_port);
  }
  return std::move(r).Finish();
}

base::Result<Bytes> BuildPnetDel(uint32_t seq, uint16_t family, std::string_view pnet_id) {
  // The kernel compares it verbatim: "net1" would never match the "NET1" that SMC_PNETID_ADD stored.
  ASSIGN_OR_RETURN(const std::string id, NormalizePnetId(pnet_id));
  auto r = GenlRequest(family, SMC_PNETID_DEL, kCommand, seq);
  r.PutString(SMC_PNETID_NAME, id);
  return std::move(r).Finish();
}

Bytes BuildUeidDump(uint32_t seq, uint16_t family) {
  return GenlRequest(family, SMC_NETLINK_DUMP_UEID, kDump, seq).Finish();
}

base::Result<Bytes> BuildUeidAdd(uint32_t seq, uint16_t family, std::string_view ueid) {
  return BuildUeidCommand(seq, family, SMC_NETLINK_ADD_UEID, ueid);
}

base::Result<Bytes> BuildUeidRemove(uint32_t seq, uint16_t family, std::string_view ueid) {
  return BuildUeidCommand(seq, family, SMC_NETLINK_REMOVE_UEID, ueid);
}

base::Result<PnetEntry> ParsePnetEntry(std::span<const uint8_t> msg, uint16_t family) {
  constexpr const char* kWhat = "SMC_PNETID_GET message";
  ASSIGN_OR_RETURN(Attrs a, ParseMessage(msg, kWhat, family, SMC_PNETID_GET, kPnetPolicy));
  if (!a[SMC_PNETID_NAME]) return Missing(kWhat, "SMC_PNETID_NAME");
  if (!a[SMC_PNETID_ETHNAME]) return Missing(kWhat, "SMC_PNETID_ETHNAME");
  if (!a[SMC_PNETID_IBNAME]) return Missing(kWhat, "SMC_PNETID_IBNAME");
  if (!a[SMC_PNETID_IBPORT]) return Missing(kWhat, "SMC_PNETID_IBPORT");
  PnetEntry e;
  e.pnet_id = a.Str(SMC_PNETID_NAME);
  // Neither a netdev nor an RDMA device name can hold '/': "n/a" is never a real one.
  e.eth_name = a.Str(SMC_PNETID_ETHNAME);
  if (e.eth_name == kNotApplicable) e.eth_name.clear();
  e.ib_name = a.Str(SMC_PNETID_IBNAME);
  if (e.ib_name == kNotApplicable) e.ib_name.clear();
  e.ib_port = nla_get_u8(a[SMC_PNETID_IBPORT]);
  if (e.ib_port == kNoIbPort) e.ib_port = 0;
  if (e.eth_name.empty() == e.ib_name.empty()) {
    return Malformed(
        std::string(kWhat) + " for " + e.pnet_id +
        (e.eth_name.empty() ? " names neither a netdev nor a device" : " names both a netdev and a device"));
  }
  return e;
}

base::Result<std::string> ParseUeid(std::span<const uint8_t> msg, uint16_t family) {
  constexpr const char* kWhat = "SMC_NETLINK_DUMP_UEID message";
  ASSIGN_OR_RETURN(Attrs a, ParseMessage(msg, kWhat, family, SMC_NETLINK_DUMP_UEID, kUeidPolicy));
  if (!a[SMC_NLA_EID_TABLE_ENTRY]) return Missing(kWhat, "SMC_NLA_EID_TABLE_ENTRY");
  return TrimUeid(a.Str(SMC_NLA_EID_TABLE_ENTRY));
}

}  // namespace smcnl
}  // namespace netlink

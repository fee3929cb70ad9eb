#include "cni/driver/vf_settings.h"

#include <cerrno>
#include <limits>

#include "base/log.h"
#include "cni/driver/driver.h"
#include "cni/journal/vf_device.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "conf/mode_options.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using conf::Get;
using conf::Invalid;
using conf::Key;
using nlohmann::json;

namespace {

constexpr std::string_view kVfKeys[] = {"mac",      "vlan",  "vlanQoS",   "minTxRate",     "maxTxRate",
                                        "spoofchk", "trust", "linkState", "infinibandGUID"};
constexpr conf::Level kVfLevel{"vf", kVfKeys};
constexpr std::pair<std::string_view, VfOptions::LinkState> kLinkStates[] = {
    {"auto", VfOptions::LinkState::kAuto},
    {"enable", VfOptions::LinkState::kEnable},
    {"disable", VfOptions::LinkState::kDisable}};

/// "00:11:22:33:44:55:66:77" in any case, returned lower case.
std::optional<std::string> NormalizeGuid(std::string_view s) {
  if (s.size() != 23) return std::nullopt;
  for (size_t i = 0; i < s.size(); ++i)
    if (i % 3 == 2 ? s[i] != ':' : !conf::IsHexDigit(s[i])) return std::nullopt;
  return conf::AsciiLower(s);
}

Status ParseGuid(const json& v, const std::string& path, std::optional<std::string>& out) {
  std::optional<std::string> g;
  if (v.is_string()) g = NormalizeGuid(v.get_ref<const std::string&>());
  if (!g) return Invalid(path + ": must be a GUID like \"00:11:22:33:44:55:66:77\"");
  out = g;
  return base::Ok();
}

Status ParseU32(const json& b, const char* key, uint64_t max, const std::string& what,
                std::optional<uint32_t>& out) {
  const json* v = Get(b, key);
  if (!v) return base::Ok();
  uint64_t n = 0;
  if (!conf::GetUint(*v, 0, max, &n))
    return Invalid("vf." + std::string(key) + ": must be an integer 0.." + std::to_string(max) + what);
  out = static_cast<uint32_t>(n);
  return base::Ok();
}

Status ParseVfBlock(const json& b, VfOptions& out, std::optional<std::string>& mac) {
  if (!b.is_object()) return Invalid("vf: must be an object, e.g. {\"vlan\": 100, \"spoofchk\": true}");
  RETURN_IF_ERROR(conf::RefuseUnknown(b, kVfLevel));
  if (const json* m = Get(b, Key(kVfLevel, "mac"))) {
    mac = conf::UnicastMac(*m);
    if (!mac) return Invalid(std::string("vf.mac") + conf::kMacFix);
  }
  RETURN_IF_ERROR(ParseU32(b, Key(kVfLevel, "vlan"), 4094, " (0 = untagged)", out.vlan));
  RETURN_IF_ERROR(ParseU32(b, Key(kVfLevel, "vlanQoS"), 7, "", out.vlan_qos));
  if (out.vlan_qos && !out.vlan)
    return Invalid("vf.vlanQoS: needs vf.vlan; set the VLAN the priority is for");
  RETURN_IF_ERROR(ParseU32(b, Key(kVfLevel, "minTxRate"), std::numeric_limits<uint32_t>::max(), " (Mbps)",
                           out.min_tx_rate));
  RETURN_IF_ERROR(ParseU32(b, Key(kVfLevel, "maxTxRate"), std::numeric_limits<uint32_t>::max(),
                           " (Mbps, 0 = unlimited)", out.max_tx_rate));
  if (out.min_tx_rate && out.max_tx_rate && *out.max_tx_rate != 0 && *out.min_tx_rate > *out.max_tx_rate)
    return Invalid("vf.minTxRate: must not exceed vf.maxTxRate");
  bool flag = false;
  if (Get(b, Key(kVfLevel, "spoofchk"))) {
    RETURN_IF_ERROR(conf::GetBool(b, Key(kVfLevel, "spoofchk"), "vf.spoofchk", &flag));
    out.spoofchk = flag;
  }
  if (Get(b, Key(kVfLevel, "trust"))) {
    RETURN_IF_ERROR(conf::GetBool(b, Key(kVfLevel, "trust"), "vf.trust", &flag));
    out.trust = flag;
  }
  if (const json* v = Get(b, Key(kVfLevel, "linkState"))) {
    VfOptions::LinkState state{};
    RETURN_IF_ERROR(ParseName(*v, "vf.linkState", "supported", kLinkStates, state));
    out.link_state = state;
  }
  if (const json* v = Get(b, Key(kVfLevel, "infinibandGUID")))
    RETURN_IF_ERROR(ParseGuid(*v, "vf.infinibandGUID", out.ib_guid));
  return base::Ok();
}

}  // namespace

Result<conf::ParsedMode> ParseVfOptions(const conf::ModeInput& in) {
  auto o = std::make_shared<VfOptions>();
  conf::ParsedMode out;
  if (in.block) RETURN_IF_ERROR(ParseVfBlock(*in.block, *o, out.mac));
  // The runtime's capability "infinibandGUID" (the SR-IOV operator's) wins over the config's.
  if (const json* rc = Get(in.root, "runtimeConfig"); rc && rc->is_object())
    if (const json* g = Get(*rc, "infinibandGUID"))
      RETURN_IF_ERROR(ParseGuid(*g, "runtimeConfig.infinibandGUID", o->ib_guid));
  out.options = std::move(o);
  return out;
}

Result<VfTarget> ResolveVf(netlink::Kernel& host, netlink::Vf& vfs, const std::string& sysfs_root,
                           const std::string& pci, const std::string& key) {
  VfTarget t;
  ASSIGN_OR_RETURN(t.sriov, FindVf(sysfs_root, pci, key));
  if (t.sriov.pf_netdev.empty())
    return Error(Code::kDeviceNotFound, key + ": the PF " + t.sriov.pf_pci + " of VF " + pci +
                                            " has no netdev on the node; VF settings go through the PF's "
                                            "netdev, so its driver must be loaded in the node's netns");
  ASSIGN_OR_RETURN(auto pf, host.FindLink(t.sriov.pf_netdev));
  if (!pf)
    return Error(Code::kDeviceNotFound, key + ": the PF netdev " + t.sriov.pf_netdev + " of VF " + pci +
                                            " is in sysfs but not in the node's netns");
  t.pf = *pf;
  ASSIGN_OR_RETURN(auto list, vfs.List(t.pf.index));
  const netlink::VfState* state = FindVfState(list, t.sriov.vf);
  if (!state)
    return Error(Code::kDeviceNotFound, key + ": the PF " + t.pf.name + " does not report VF " +
                                            std::to_string(t.sriov.vf) + " (" + pci + "); it reports " +
                                            std::to_string(list.size()) + " VF(s)");
  t.state = *state;
  if (!t.sriov.netdev.empty()) {
    ASSIGN_OR_RETURN(t.netdev, host.FindLink(t.sriov.netdev));
  }
  return t;
}

StepVf PlanVf(const conf::Config& cfg, const std::optional<std::string>& mac, const VfTarget& t) {
  const VfOptions& c = conf::OptionsOf<VfOptions>(cfg.mode_options);
  const netlink::VfState& now = t.state;
  StepVf step;
  step.pf = t.pf.name;
  step.pf_index = t.pf.index;
  step.pci = t.sriov.pci;
  if (t.netdev) {
    step.netdev = t.netdev->name;
    step.netdev_mac = t.netdev->mac;
  }
  netlink::VfSettings& a = step.applied;
  netlink::VfSettings& o = step.old;
  a.vf = o.vf = t.sriov.vf;
  std::vector<std::string> unknown;  // members whose old value the driver does not report
  auto keep_old = [&](auto& old, const auto& reported, const char* member) {
    if (reported == std::decay_t<decltype(reported)>{})
      unknown.push_back(member);
    else
      old = reported;
  };
  if (mac) {
    a.mac = *mac;
    keep_old(o.mac, now.mac, "mac");
  }
  if (c.vlan) {
    a.vlan = netlink::VfVlan{*c.vlan, c.vlan_qos.value_or(0)};
    o.vlan = netlink::VfVlan{now.vlan, now.qos};
  }
  if (c.min_tx_rate || c.max_tx_rate) {
    a.rate =
        netlink::VfRate{c.min_tx_rate.value_or(now.min_tx_rate), c.max_tx_rate.value_or(now.max_tx_rate)};
    o.rate = netlink::VfRate{now.min_tx_rate, now.max_tx_rate};
  }
  if (c.spoofchk) {
    a.spoofchk = *c.spoofchk;
    keep_old(o.spoofchk, now.spoofchk, "spoofchk");
  }
  if (c.trust) {
    a.trust = *c.trust;
    keep_old(o.trust, now.trust, "trust");
  }
  if (c.link_state) {
    a.link_state = static_cast<uint32_t>(*c.link_state);
    keep_old(o.link_state, now.link_state, "linkState");
  }
  if (c.ib_guid) {
    a.node_guid = a.port_guid = *c.ib_guid;
    keep_old(o.node_guid, now.node_guid, "node GUID");
    keep_old(o.port_guid, now.port_guid, "port GUID");
  }
  for (const auto& u : unknown)
    base::Log::Warn("VF " + t.sriov.pci + ": " + t.pf.name + "'s driver does not report the VF's " + u +
                    ", so DEL cannot put back its old value");
  return step;
}

}  // namespace cni

#include "conf/mode_options.h"

#include <algorithm>
#include <limits>

#include "conf/config.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "conf/names.h"

namespace conf {
namespace {

using base::Status;
using nlohmann::json;

/// "00:11:22:33:44:55:66:77" in any case, returned lower case.
std::optional<std::string> NormalizeGuid(std::string_view s) {
  if (s.size() != 23) return std::nullopt;
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    char& c = out[i];
    if (i % 3 == 2) {
      if (c != ':') return std::nullopt;
    } else if (c >= 'A' && c <= 'F') {
      c = static_cast<char>(c - 'A' + 'a');
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return std::nullopt;
    }
  }
  return out;
}

/// A MAC a device may have: unicast (the group bit of the first octet clear).
std::optional<std::string> UnicastMac(const json& v) {
  if (!v.is_string()) return std::nullopt;
  auto m = NormalizeMac(v.get_ref<const std::string&>());
  if (!m || (std::stoi(m->substr(0, 2), nullptr, 16) & 1)) return std::nullopt;
  return m;
}

constexpr const char* kMacFix = ": must be a unicast MAC address like \"02:00:00:3b:00:01\"";

// A MAC the runtime asks for (`key`) is honoured where the mode makes the
// pod's link (macvlan) or sets it through the PF (vf).
Status CheckRuntimeMac(const std::string& key, Mode mode, const std::string& drop) {
  const ModeSpec& spec = SpecOf(mode);
  if (spec.sets_mac) return base::Ok();
  return Invalid(key + ": mode " + Quote(std::string(spec.name)) +
                 (spec.child ? " children share their parent's MAC; "
                             : " keeps the device's own MAC (an ENI's MAC is bound to it by the cloud); ") +
                 drop + " or use mode " + ModeList([](const ModeSpec& s) { return s.sets_mac; }));
}

Status ParseMacvlan(const json& b, MacvlanConfig& out, std::optional<std::string>& mac) {
  if (!b.is_object()) return Invalid("macvlan: must be an object, e.g. {\"mode\": \"passthru\"}");
  RETURN_IF_ERROR(RefuseUnknown(b, kMacvlan));
  if (const json* m = Get(b, Key(kMacvlan, "mode"))) {
    const char* fix = "use \"bridge\", \"private\", \"vepa\", \"passthru\" or \"source\"";
    if (!m->is_string()) return Invalid(std::string("macvlan.mode: must be a string; ") + fix);
    const auto& s = m->get_ref<const std::string&>();
    if (s == "bridge")
      out.mode = MacvlanMode::kBridge;
    else if (s == "private")
      out.mode = MacvlanMode::kPrivate;
    else if (s == "vepa")
      out.mode = MacvlanMode::kVepa;
    else if (s == "passthru")
      out.mode = MacvlanMode::kPassthru;
    else if (s == "source")
      out.mode = MacvlanMode::kSource;
    else
      return Invalid("macvlan.mode: " + Quote(s) + " is not a macvlan mode; " + fix);
  }
  if (const json* m = Get(b, Key(kMacvlan, "mac"))) {
    mac = UnicastMac(*m);
    if (!mac) return Invalid(std::string("macvlan.mac") + kMacFix);
  }
  if (const json* list = Get(b, Key(kMacvlan, "sourceMacs"))) {
    if (out.mode != MacvlanMode::kSource)
      return Invalid("macvlan.sourceMacs: only mode \"source\" uses it; remove it or set macvlan.mode");
    if (!list->is_array() || list->empty())
      return Invalid("macvlan.sourceMacs: must be a non-empty array of MAC addresses");
    for (const auto& e : *list) {
      std::optional<std::string> v;
      if (e.is_string()) v = NormalizeMac(e.get_ref<const std::string&>());
      if (!v)
        return Invalid("macvlan.sourceMacs: every entry must be a MAC address like \"02:00:00:3b:00:01\"");
      out.source_macs.push_back(*v);
    }
  } else if (out.mode == MacvlanMode::kSource) {
    return Invalid(
        "macvlan.sourceMacs: mode \"source\" receives only from the listed senders; list at least one MAC");
  }
  return base::Ok();
}

Status ParseIpvlan(const json& b, IpvlanConfig& out) {
  if (!b.is_object()) return Invalid("ipvlan: must be an object, e.g. {\"mode\": \"l2\"}");
  RETURN_IF_ERROR(RefuseUnknown(b, kIpvlan));
  if (const json* m = Get(b, Key(kIpvlan, "mode"))) {
    const char* fix = "use \"l2\", \"l3\" or \"l3s\"";
    if (!m->is_string()) return Invalid(std::string("ipvlan.mode: must be a string; ") + fix);
    const auto& s = m->get_ref<const std::string&>();
    if (s == "l2")
      out.mode = IpvlanMode::kL2;
    else if (s == "l3")
      out.mode = IpvlanMode::kL3;
    else if (s == "l3s")
      out.mode = IpvlanMode::kL3s;
    else
      return Invalid("ipvlan.mode: " + Quote(s) + " is not an ipvlan mode; " + fix);
  }
  if (Get(b, Key(kIpvlan, "mac")))
    return Invalid("ipvlan.mac: ipvlan children share their parent's MAC; remove it or use mode \"macvlan\"");
  return base::Ok();
}

Status ParseU32(const json& b, const char* key, uint64_t max, const std::string& what,
                std::optional<uint32_t>& out) {
  const json* v = Get(b, key);
  if (!v) return base::Ok();
  uint64_t n = 0;
  if (!GetUint(*v, 0, max, &n))
    return Invalid("vf." + std::string(key) + ": must be an integer 0.." + std::to_string(max) + what);
  out = static_cast<uint32_t>(n);
  return base::Ok();
}

Status ParseGuid(const json& v, const std::string& path, std::optional<std::string>& out) {
  std::optional<std::string> g;
  if (v.is_string()) g = NormalizeGuid(v.get_ref<const std::string&>());
  if (!g) return Invalid(path + ": must be a GUID like \"00:11:22:33:44:55:66:77\"");
  out = g;
  return base::Ok();
}

Status ParseVf(const json& b, VfConfig& out, std::optional<std::string>& mac) {
  if (!b.is_object()) return Invalid("vf: must be an object, e.g. {\"vlan\": 100, \"spoofchk\": true}");
  RETURN_IF_ERROR(RefuseUnknown(b, kVf));
  if (const json* m = Get(b, Key(kVf, "mac"))) {
    mac = UnicastMac(*m);
    if (!mac) return Invalid(std::string("vf.mac") + kMacFix);
  }
  RETURN_IF_ERROR(ParseU32(b, Key(kVf, "vlan"), 4094, " (0 = untagged)", out.vlan));
  RETURN_IF_ERROR(ParseU32(b, Key(kVf, "vlanQoS"), 7, "", out.vlan_qos));
  if (out.vlan_qos && !out.vlan)
    return Invalid("vf.vlanQoS: needs vf.vlan; set the VLAN the priority is for");
  RETURN_IF_ERROR(
      ParseU32(b, Key(kVf, "minTxRate"), std::numeric_limits<uint32_t>::max(), " (Mbps)", out.min_tx_rate));
  RETURN_IF_ERROR(ParseU32(b, Key(kVf, "maxTxRate"), std::numeric_limits<uint32_t>::max(),
                           " (Mbps, 0 = unlimited)", out.max_tx_rate));
  if (out.min_tx_rate && out.max_tx_rate && *out.max_tx_rate != 0 && *out.min_tx_rate > *out.max_tx_rate)
    return Invalid("vf.minTxRate: must not exceed vf.maxTxRate");
  bool flag = false;
  if (Get(b, Key(kVf, "spoofchk"))) {
    RETURN_IF_ERROR(GetBool(b, Key(kVf, "spoofchk"), "vf.spoofchk", &flag));
    out.spoofchk = flag;
  }
  if (Get(b, Key(kVf, "trust"))) {
    RETURN_IF_ERROR(GetBool(b, Key(kVf, "trust"), "vf.trust", &flag));
    out.trust = flag;
  }
  if (const json* v = Get(b, Key(kVf, "linkState"))) {
    const char* fix = "use \"auto\", \"enable\" or \"disable\"";
    if (!v->is_string()) return Invalid(std::string("vf.linkState: must be a string; ") + fix);
    const auto& s = v->get_ref<const std::string&>();
    if (s == "auto")
      out.link_state = VfConfig::LinkState::kAuto;
    else if (s == "enable")
      out.link_state = VfConfig::LinkState::kEnable;
    else if (s == "disable")
      out.link_state = VfConfig::LinkState::kDisable;
    else
      return Invalid("vf.linkState: " + Quote(s) + " is not supported; " + fix);
  }
  if (const json* v = Get(b, Key(kVf, "infinibandGUID")))
    RETURN_IF_ERROR(ParseGuid(*v, "vf.infinibandGUID", out.ib_guid));
  return base::Ok();
}

}  // namespace

const char* MacvlanModeName(MacvlanMode m) {
  switch (m) {
    case MacvlanMode::kPrivate: return "private";
    case MacvlanMode::kVepa: return "vepa";
    case MacvlanMode::kBridge: return "bridge";
    case MacvlanMode::kPassthru: return "passthru";
    case MacvlanMode::kSource: return "source";
  }
  return "?";
}

const char* IpvlanModeName(IpvlanMode m) {
  switch (m) {
    case IpvlanMode::kL2: return "l2";
    case IpvlanMode::kL3: return "l3";
    case IpvlanMode::kL3s: return "l3s";
  }
  return "?";
}

const char* LinkStateName(VfConfig::LinkState s) {
  switch (s) {
    case VfConfig::LinkState::kAuto: return "auto";
    case VfConfig::LinkState::kEnable: return "enable";
    case VfConfig::LinkState::kDisable: return "disable";
  }
  return "?";
}

base::Result<ModeOptions> ParseModeOptions(const json& root, Mode m) {
  ModeOptions o;
  for (const ModeSpec& s : Modes()) {
    if (s.options_key.empty() || s.mode == m) continue;
    if (auto b = root.find(s.options_key); b != root.end() && !b->is_null())
      return Invalid(std::string(s.options_key) + ": only mode " + Quote(s.name) + " reads it, and mode is " +
                     Quote(ModeName(m)) + "; remove it or set \"mode\": " + Quote(s.name));
  }
  if (const json* b = Get(root, Key(kTop, "macvlan"))) RETURN_IF_ERROR(ParseMacvlan(*b, o.macvlan, o.mac));
  if (const json* b = Get(root, Key(kTop, "ipvlan"))) RETURN_IF_ERROR(ParseIpvlan(*b, o.ipvlan));
  if (const json* b = Get(root, Key(kTop, "vf"))) RETURN_IF_ERROR(ParseVf(*b, o.vf, o.mac));

  // Per-pod values: the runtime's `mac` capability, then Multus' cni-args.
  std::optional<std::string> runtime_mac;
  std::string runtime_mac_key;
  auto take_mac = [&](const json* v, const std::string& path) -> Status {
    if (!v || runtime_mac) return base::Ok();
    std::optional<std::string> m = UnicastMac(*v);
    if (!m) return Invalid(path + kMacFix);
    runtime_mac = m;
    runtime_mac_key = path;
    return base::Ok();
  };
  const json* rc = Get(root, Key(kTop, "runtimeConfig"));
  if (rc && rc->is_object()) RETURN_IF_ERROR(take_mac(Get(*rc, "mac"), "runtimeConfig.mac"));
  const json* args = Get(root, Key(kTop, "args"));
  const json* cni_args = args && args->is_object() ? Get(*args, "cni") : nullptr;
  if (cni_args && cni_args->is_object()) RETURN_IF_ERROR(take_mac(Get(*cni_args, "mac"), "args.cni.mac"));
  if (runtime_mac) {
    RETURN_IF_ERROR(CheckRuntimeMac(runtime_mac_key, m, "drop the \"mac\" capability"));
    o.mac = runtime_mac;
    o.runtime_mac = true;
  }
  if (rc && rc->is_object()) {
    if (const json* g = Get(*rc, "infinibandGUID")) {
      if (m != Mode::kVf)
        return Invalid("runtimeConfig.infinibandGUID: only mode \"vf\" sets a GUID; drop the capability");
      RETURN_IF_ERROR(ParseGuid(*g, "runtimeConfig.infinibandGUID", o.vf.ib_guid));
    }
  }
  if (m == Mode::kMacvlan && o.mac && o.macvlan.mode == MacvlanMode::kPassthru)
    return Invalid(std::string(runtime_mac ? runtime_mac_key : "macvlan.mac") +
                   ": a passthru macvlan takes its parent's MAC, and setting one would change the "
                   "parent's; remove the MAC or use another macvlan.mode");
  return o;
}

base::Result<PodRequests> ReadPodRequests(const Config& c,
                                          const std::map<std::string, std::string>& cni_args) {
  PodRequests r;
  r.mac = c.mac;
  // runtimeConfig.ips (capability "ips"): addresses, with or without a length.
  std::vector<std::string> ips;
  std::string key;
  if (const json* v = Get(c.runtime_config, "ips")) {
    key = "runtimeConfig.ips";
    if (!v->is_array()) return Invalid(key + ": must be an array of addresses like \"10.9.0.7/24\"");
    for (const json& ip : *v) {
      if (!ip.is_string()) return Invalid(key + ": must be an array of addresses like \"10.9.0.7/24\"");
      ips.push_back(ip.get<std::string>());
    }
  }
  // CNI_ARGS MAC= and IP= (podman --mac-address, --ip) are the pod's only when
  // this plugin makes the pod's interface: chained, they are the primary's.
  if (!c.chained()) {
    if (auto mac = cni_args.find("MAC"); mac != cni_args.end()) {
      std::optional<std::string> m = UnicastMac(json(mac->second));
      if (!m) return Invalid(std::string("CNI_ARGS MAC") + kMacFix);
      RETURN_IF_ERROR(CheckRuntimeMac("CNI_ARGS MAC", c.mode,
                                      "remove MAC from CNI_ARGS (podman: "
                                      "drop --mac-address)"));
      if (c.mode == Mode::kMacvlan && c.macvlan.mode == MacvlanMode::kPassthru)
        return Invalid(
            "CNI_ARGS MAC: a passthru macvlan takes its parent's MAC, and setting one would change the "
            "parent's; remove MAC from CNI_ARGS or use another macvlan.mode");
      // The capability (runtimeConfig.mac) wins over CNI_ARGS, which wins over the config's own.
      if (!c.runtime_mac) r.mac = m;
    }
    if (auto ip = cni_args.find("IP"); ip != cni_args.end() && ips.empty()) {
      key = "CNI_ARGS IP";
      for (size_t at = 0; at <= ip->second.size();) {
        const size_t comma = std::min(ip->second.find(',', at), ip->second.size());
        ips.push_back(ip->second.substr(at, comma - at));
        at = comma + 1;
      }
    }
  }
  for (const std::string& text : ips) {
    auto prefix = netlink::IpPrefix::Parse(text, /*allow_bare=*/true);
    if (!prefix) return Invalid(key + ": " + Quote(text) + " is not an IP address like \"10.9.0.7\"");
    r.ips.push_back({*prefix, text.find('/') != std::string::npos});
  }
  r.ips_key = key;
  // With IPAM the plugin gets them unchanged (CNI_ARGS and runtimeConfig are
  // in its environment and config); without, nothing could honour them.
  if (!ips.empty() && c.addresses == AddressMode::kNone)
    return Invalid(key +
                   ": addresses is \"none\", so this network gives the pod no address; remove the request "
                   "or set addresses \"ipam\" with an IPAM plugin that takes it (host-local, static)");
  return r;
}

}  // namespace conf

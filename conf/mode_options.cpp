#include "conf/mode_options.h"

#include <algorithm>

#include "conf/config.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "conf/names.h"

namespace conf {
namespace {

using base::Status;
using nlohmann::json;

// A MAC the runtime asks for (`key`) is honoured where the mode makes the pod's link or sets it through the
// PF (sets_mac), and its options allow it.
Status CheckMac(const std::string& key, const ModeSpec& mode, ModeTable modes, const ModeOptions* options,
                const std::string& drop) {
  if (!mode.sets_mac)
    return Invalid(key + ": mode " + Quote(mode.name) +
                   (mode.child ? " children share their parent's MAC; "
                               : " keeps the device's own MAC (an ENI's MAC is bound to it by the cloud); ") +
                   drop + " or use mode " + ModeList(modes, [](const ModeSpec& s) { return s.sets_mac; }));
  return mode.check_mac ? mode.check_mac(options, key) : base::Ok();
}

}  // namespace

std::optional<std::string> UnicastMac(const json& v) {
  if (!v.is_string()) return std::nullopt;
  auto m = NormalizeMac(v.get_ref<const std::string&>());
  if (!m || (std::stoi(m->substr(0, 2), nullptr, 16) & 1)) return std::nullopt;
  return m;
}

base::Result<ModeSettings> ParseModeSettings(const json& root, const ModeSpec& mode, ModeTable modes) {
  ModeSettings o;
  for (const ModeSpec* s : modes) {
    if (s->options_key.empty() || s == &mode) continue;
    if (auto b = root.find(s->options_key); b != root.end() && !b->is_null())
      return Invalid(std::string(s->options_key) + ": only mode " + Quote(s->name) +
                     " reads it, and mode is " + Quote(mode.name) +
                     "; remove it or set \"mode\": " + Quote(s->name));
  }
  if (mode.parse) {
    const json* block = mode.options_key.empty() ? nullptr : Get(root, std::string(mode.options_key).c_str());
    ASSIGN_OR_RETURN(ParsedMode parsed, mode.parse(ModeInput{root, block}));
    o.options = std::move(parsed.options);
    o.mac = std::move(parsed.mac);
  }

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
    o.mac = runtime_mac;
    o.runtime_mac = true;
  }
  if (o.mac)
    RETURN_IF_ERROR(CheckMac(runtime_mac ? runtime_mac_key : std::string(mode.options_key) + ".mac", mode,
                             modes, o.options.get(), "drop the \"mac\" capability"));
  if (rc && rc->is_object() && Get(*rc, "infinibandGUID") && !mode.sets_guid)
    return Invalid("runtimeConfig.infinibandGUID: only mode " +
                   ModeList(modes, [](const ModeSpec& s) { return s.sets_guid; }) +
                   " sets a GUID; drop the capability");
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
    if (!v->is_array() || !std::all_of(v->begin(), v->end(), [](const json& ip) { return ip.is_string(); }))
      return Invalid(key + ": must be an array of addresses like \"10.9.0.7/24\"");
    ips = v->get<std::vector<std::string>>();
  }
  // CNI_ARGS MAC= and IP= (podman --mac-address, --ip) are the pod's only when
  // this plugin makes the pod's interface: chained, they are the primary's.
  if (!c.chained()) {
    if (auto mac = cni_args.find("MAC"); mac != cni_args.end()) {
      std::optional<std::string> m = UnicastMac(json(mac->second));
      if (!m) return Invalid(std::string("CNI_ARGS MAC") + kMacFix);
      RETURN_IF_ERROR(CheckMac("CNI_ARGS MAC", *c.mode, c.modes, c.mode_options.get(),
                               "remove MAC from CNI_ARGS (podman: drop --mac-address)"));
      // The capability (runtimeConfig.mac) wins over CNI_ARGS, which wins over the config's own.
      if (!c.runtime_mac) r.mac = m;
    }
    if (auto ip = cni_args.find("IP"); ip != cni_args.end() && ips.empty()) {
      key = "CNI_ARGS IP";
      for (std::string_view piece : Split(ip->second, ',')) ips.emplace_back(piece);
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

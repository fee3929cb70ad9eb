#include "conf/config.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/json_parse.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "conf/names.h"
#include "conf/rdma_config.h"
#include "conf/smcr_config.h"
#include "conf/version.h"
#include "netlink/rtnl_kernel.h"

namespace conf {
namespace {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

std::string SupportedList() { return Join(SupportedVersions(), ", "); }

// --- one function per key group -------------------------------------------

Status ParseVersion(const json& root, Config& c) {
  if (const json* v = Get(root, Key(kTop, "cniVersion"))) {
    if (!v->is_string())
      return Error(Code::kIncompatibleVersion, "cniVersion: must be a string, one of " + SupportedList());
    const auto& s = v->get_ref<const std::string&>();
    if (!IsSupportedVersion(s))
      return Error(Code::kIncompatibleVersion,
                   "cniVersion: " + Quote(s) + " is not supported; use one of " + SupportedList());
    c.cni_version = s;
    return base::Ok();
  }
  if (const json* list = Get(root, Key(kTop, "cniVersions"))) {
    if (!list->is_array() ||
        !std::all_of(list->begin(), list->end(), [](const json& e) { return e.is_string(); }))
      return Invalid("cniVersions: must be an array of version strings");
    auto picked = PickVersion(list->get<std::vector<std::string>>());
    if (!picked)
      return Error(Code::kIncompatibleVersion,
                   "cniVersions: " + list->dump(-1, ' ', false, json::error_handler_t::replace) +
                       " holds no supported version; include one of " + SupportedList());
    c.cni_version = *picked;
    return base::Ok();
  }
  return Error(Code::kIncompatibleVersion, "cniVersion: missing; set it to one of " + SupportedList());
}

Status ParseIdentity(const json& root, Config& c) {
  const json* name = Get(root, Key(kTop, "name"));
  if (!name) return Invalid("name: missing; set a non-empty network name");
  if (!name->is_string() || name->get_ref<const std::string&>().empty())
    return Invalid("name: must be a non-empty string");
  const auto& n = name->get_ref<const std::string&>();
  if (!IsPlainFileName(n, kMaxNetworkNameBytes))
    return Invalid("name: " + Quote(n) +
                   " must be usable as a directory name: at most 128 bytes, no '/', "
                   "not \".\" or \"..\", no control characters");
  if (IsReservedDataDirName(n))
    return Invalid("name: " + Quote(n) + " is reserved: erdma-cni keeps its " + n +
                   " directory beside the networks' directories in dataDir; choose another network name");
  c.name = n;

  if (const json* type = Get(root, Key(kTop, "type"))) {
    if (!type->is_string()) return Invalid("type: must be a string");
    c.type = type->get<std::string>();
  }
  return base::Ok();
}

Status ParseMode(const json& root, Config& c) {
  if (const json* mode = Get(root, Key(kTop, "mode"))) {
    if (!mode->is_string()) return Invalid("mode: must be a string; use " + ModeList(c.modes, nullptr));
    const auto& m = mode->get_ref<const std::string&>();
    const ModeSpec* known = ModeNamed(c.modes, m);
    if (!known) return Invalid("mode: " + Quote(m) + " is not supported; use " + ModeList(c.modes, nullptr));
    c.mode = known;
  }
  return base::Ok();
}

// After the key of an interface name that IsValidIfName refuses.
constexpr const char* kIfNameFix =
    ": must be an interface name: 1..15 bytes, no '/', ':' or whitespace, not \".\" or \"..\"";

Status ParseDeviceId(const json& v, const char* path, Config& c) {
  if (!v.is_string() || !IsValidDeviceId(v.get_ref<const std::string&>()))
    return Invalid(std::string(path) +
                   ": must be a non-empty string of printable ASCII without whitespace, "
                   "at most 256 bytes");
  c.device = DeviceSelector{DeviceSelector::By::kDeviceId, v.get<std::string>(), {}};
  return base::Ok();
}

// device.pool: {"names": [...], "pciVendor": "0x1ded", "rdmaDriver": "erdma"}.
Result<DevicePool> ParsePool(const json& p) {
  if (!p.is_object() || p.empty())
    return Invalid("device.pool: must be an object with at least one of names, pciVendor, rdmaDriver");
  RETURN_IF_ERROR(RefuseUnknown(p, kPool));
  DevicePool pool;
  if (const json* v = Get(p, Key(kPool, "names"))) {
    if (!v->is_array() || v->empty() || v->size() > 64)
      return Invalid("device.pool.names: must be a list of 1..64 interface names");
    for (const json& n : *v) {
      if (!n.is_string() || !IsValidIfName(n.get_ref<const std::string&>()))
        return Invalid(
            "device.pool.names: every entry must be an interface name (1..15 bytes, no '/', "
            "':' or whitespace)");
      pool.names.push_back(n.get<std::string>());
    }
  }
  if (const json* v = Get(p, Key(kPool, "pciVendor"))) {
    std::string s = AsciiLower(v->is_string() ? v->get_ref<const std::string&>() : "");
    if (!s.starts_with("0x")) s = "0x" + s;
    if (s.size() != 6 || s.find_first_not_of("0123456789abcdef", 2) != std::string::npos)
      return Invalid(
          "device.pool.pciVendor: must be a PCI vendor ID like \"0x1ded\" (see "
          "/sys/class/net/<if>/device/vendor)");
    pool.pci_vendor = s;
  }
  if (const json* v = Get(p, Key(kPool, "rdmaDriver"))) {
    const std::string* d = v->is_string() ? &v->get_ref<const std::string&>() : nullptr;
    if (!d || d->empty() || d->size() > 64 || !IsValidDeviceId(*d) || d->find('/') != std::string::npos)
      return Invalid("device.pool.rdmaDriver: must be a kernel driver name like \"erdma\" or \"mlx5_core\"");
    pool.rdma_driver = *d;
  }
  if (pool.names.empty() && pool.pci_vendor.empty() && pool.rdma_driver.empty())
    return Invalid("device.pool: must be an object with at least one of names, pciVendor, rdmaDriver");
  return pool;
}

// device.count: 1..kMaxDevices or "all".
Status ParseCount(const json& v, DeviceSelector& sel) {
  if (v.is_string() && v.get_ref<const std::string&>() == "all") {
    sel.all = true;
    return base::Ok();
  }
  if (!v.is_number_unsigned() || v.get<uint64_t>() < 1 || v.get<uint64_t>() > kMaxDevices)
    return Invalid("device.count: must be a number of devices from 1 to " + std::to_string(kMaxDevices) +
                   ", or \"all\"");
  sel.count = v.get<uint32_t>();
  return base::Ok();
}

Status ParseDevice(const json& root, bool device_optional, Config& c) {
  if (const json* d = Get(root, Key(kTop, "device"))) {
    if (!d->is_object())
      return Invalid("device: must be an object; set exactly one of name, mac, pci, rdma, resource, pool");
    RETURN_IF_ERROR(RefuseUnknown(*d, kDevice));
    const json* name = Get(*d, Key(kDevice, "name"));
    const json* mac = Get(*d, Key(kDevice, "mac"));
    const json* pci = Get(*d, Key(kDevice, "pci"));
    const json* rdma = Get(*d, Key(kDevice, "rdma"));
    const json* resource = Get(*d, Key(kDevice, "resource"));
    const json* pool = Get(*d, Key(kDevice, "pool"));
    const json* count = Get(*d, Key(kDevice, "count"));
    const int fixed = (name != nullptr) + (mac != nullptr) + (pci != nullptr) + (rdma != nullptr);
    if (fixed + (resource != nullptr) + (pool != nullptr && !resource) != 1)
      return Invalid(
          "device: set exactly one of name, mac, pci, rdma, resource, pool (pool may go with resource)");
    std::optional<DevicePool> parsed_pool;
    if (pool) {
      if (!c.mode->from_pool)
        return Invalid(
            "device.pool: mode " + std::string(c.mode->name) + " takes no device from a pool; use mode " +
            ModeList(c.modes, [](const ModeSpec& s) { return s.from_pool; }) + ", or remove device.pool");
      ASSIGN_OR_RETURN(parsed_pool, ParsePool(*pool));
    }
    if (resource) {
      // A Kubernetes extended resource: "<domain>/<name>".
      const std::string* r = resource->is_string() ? &resource->get_ref<const std::string&>() : nullptr;
      if (!r || r->size() > 253 || !IsValidDeviceId(*r) || r->find('/') == std::string::npos ||
          r->front() == '/' || r->back() == '/')
        return Invalid(
            "device.resource: must be the Kubernetes resource name the device plugin registers, like "
            "\"aliyun/erdma\"");
      c.device = DeviceSelector{DeviceSelector::By::kResource, *r, {}};
    } else if (pool) {
      c.device = DeviceSelector{DeviceSelector::By::kPool, "pool", {}};
    } else if (name) {
      if (!name->is_string() || !IsValidIfName(name->get_ref<const std::string&>()))
        return Invalid(std::string("device.name") + kIfNameFix);
      c.device = DeviceSelector{DeviceSelector::By::kName, name->get<std::string>(), {}};
    } else if (rdma) {
      // RDMA device names are at most 63 bytes and printable, like a device ID.
      const std::string* r = rdma->is_string() ? &rdma->get_ref<const std::string&>() : nullptr;
      if (!r || r->size() > 63 || !IsValidDeviceId(*r) || r->find('/') != std::string::npos)
        return Invalid("device.rdma: must be an RDMA device name like \"erdma_0\" (see `rdma dev`)");
      c.device = DeviceSelector{DeviceSelector::By::kRdma, *r, {}};
    } else if (mac) {
      const auto m = mac->is_string() ? NormalizeMac(mac->get_ref<const std::string&>()) : std::nullopt;
      if (!m) return Invalid("device.mac: must be a MAC address like \"02:00:00:3b:00:01\"");
      c.device = DeviceSelector{DeviceSelector::By::kMac, *m, {}};
    } else {
      const auto p = pci->is_string() ? NormalizePci(pci->get_ref<const std::string&>()) : std::nullopt;
      if (!p) return Invalid("device.pci: must be a PCI address like \"0000:3b:00.1\"");
      c.device = DeviceSelector{DeviceSelector::By::kPci, *p, {}};
    }
    c.device.pool = std::move(parsed_pool);
    if (count) {
      if (fixed)
        return Invalid(
            "device.count: only device.resource and device.pool give several devices; remove "
            "count, or select by resource or pool");
      RETURN_IF_ERROR(ParseCount(*count, c.device));
      if (c.device.Several() && !c.mode->takes_device)
        return Invalid("device.count: mode " + std::string(c.mode->name) + " takes no device; remove count");
    }
    return GetBool(*d, Key(kDevice, "required"), "device.required", &c.device.required);
  }
  if (const json* id = Get(root, Key(kTop, "deviceID"))) return ParseDeviceId(*id, "deviceID", c);
  if (const json* rc = Get(root, Key(kTop, "runtimeConfig")); rc && rc->is_object()) {
    if (const json* id = Get(*rc, "deviceID")) return ParseDeviceId(*id, "runtimeConfig.deviceID", c);
  }
  if (device_optional || !c.mode->takes_device) return base::Ok();
  return Invalid(
      "device: missing; set device.name, device.mac or device.pci, or let the runtime pass "
      "deviceID");
}

Status ParseIfName(const json& root, Config& c) {
  if (const json* v = Get(root, Key(kTop, "ifName"))) {
    if (!v->is_string() || !IsValidIfName(v->get_ref<const std::string&>()))
      return Invalid(std::string("ifName") + kIfNameFix);
    c.if_name = v->get<std::string>();
  }
  return base::Ok();
}

// The integer `key` of `obj` into `out` when it is in [min, max]; else "<path>: must be an integer
// <min>..<max><unit>", and `out` keeps its value.
template <class T>
Status ReadUint(const json& obj, const char* key, const std::string& path, uint64_t min, uint64_t max, T& out,
                const char* unit = "") {
  const json* v = Get(obj, key);
  uint64_t n = 0;
  if (!v) return base::Ok();
  if (!GetUint(*v, min, max, &n))
    return Invalid(path + ": must be an integer " + std::to_string(min) + ".." + std::to_string(max) + unit);
  out = static_cast<T>(n);
  return base::Ok();
}

Status ParseIpam(const json& root, Config& c) {
  if (const json* ipam = Get(root, Key(kTop, "ipam"))) {
    if (!ipam->is_object()) return Invalid("ipam: must be an object with a \"type\"");
    const json* type = Get(*ipam, "type");
    if (!type || !type->is_string() || type->get_ref<const std::string&>().empty())
      return Invalid("ipam.type: must be a non-empty string naming the IPAM plugin");
    const auto& t = type->get_ref<const std::string&>();
    if (!IsPlainFileName(t))
      return Invalid("ipam.type: " + Quote(t) + " must be a plugin file name: no '/', not \".\" or \"..\"");
    c.ipam = *ipam;
    c.ipam_type = t;
  }
  return base::Ok();
}

// A new child has nothing to inherit: it takes addresses from IPAM.
AddressMode DefaultAddresses(const Config& c) {
  return !c.ipam.is_null() ? AddressMode::kIpam : c.child() ? AddressMode::kNone : AddressMode::kInherit;
}

// `addresses` is set only once it is valid: a group that fails at DEL leaves the default.
Status ParseAddresses(const json& root, Config& c) {
  c.addresses = DefaultAddresses(c);
  const json* v = Get(root, Key(kTop, "addresses"));
  if (!v) return base::Ok();
  const std::string fix = "use \"inherit\", \"ipam\" or \"none\"";
  if (!v->is_string()) return Invalid("addresses: must be a string; " + fix);
  const auto& s = v->get_ref<const std::string&>();
  AddressMode mode = AddressMode::kNone;
  if (s == "inherit")
    mode = AddressMode::kInherit;
  else if (s == "ipam")
    mode = AddressMode::kIpam;
  else if (s != "none")
    return Invalid("addresses: " + Quote(s) + " is not supported; " + fix);
  if (mode == AddressMode::kIpam && c.ipam.is_null())
    return Invalid("addresses: \"ipam\" needs an ipam object, e.g. {\"type\": \"host-local\", ...}");
  if (mode == AddressMode::kInherit && c.child())
    return Invalid(std::string("addresses: \"inherit\" would copy the parent's addresses onto a ") +
                   std::string(c.mode->name) + " child; use \"ipam\" with an ipam object, or \"none\"");
  if (mode != AddressMode::kIpam && !c.ipam.is_null())
    return Invalid("ipam: set beside addresses " + Quote(s) +
                   ", which never runs the IPAM plugin; remove ipam, or set addresses to \"ipam\" (the "
                   "default with an ipam object)");
  c.addresses = mode;
  return base::Ok();
}

Status ParseRouting(const json& root, Config& c) {
  const json* r = Get(root, Key(kTop, "routing"));
  if (!r) return base::Ok();
  if (!r->is_object()) return Invalid("routing: must be an object");
  RETURN_IF_ERROR(RefuseUnknown(*r, kRouting));
  if (const json* v = Get(*r, Key(kRouting, "table"))) {
    const char* msg =
        "routing.table: must be \"auto\" or an integer 1..4294967295 other than 253, 254 "
        "and 255 (default, main, local)";
    if (v->is_string()) {
      if (v->get_ref<const std::string&>() != "auto") return Invalid(msg);
      c.routing.table = std::nullopt;
    } else {
      uint64_t n = 0;
      if (!GetUint(*v, 1, std::numeric_limits<uint32_t>::max(), &n) ||
          (n >= netlink::kTableDefault && n <= netlink::kTableLocal))
        return Invalid(msg);
      c.routing.table = static_cast<uint32_t>(n);
    }
  }
  RETURN_IF_ERROR(
      ReadUint(*r, Key(kRouting, "rulePriority"), "routing.rulePriority", 0, 32767, c.routing.rule_priority));
  RETURN_IF_ERROR(ReadUint(*r, Key(kRouting, "routeMetric"), "routing.routeMetric", 0,
                           std::numeric_limits<uint32_t>::max(), c.routing.route_metric));
  if (const json* v = Get(*r, Key(kRouting, "defaultRoute"))) {
    if (!v->is_boolean()) return Invalid("routing.defaultRoute: must be true or false");
    c.routing.default_route = v->get<bool>();
  }
  return base::Ok();
}

// Longer than any runtime waits for a CNI call: a wait past it only hides a stuck lock.
constexpr uint64_t kMaxLockTimeoutMs = 120000;

// dataDir finds the journal; the rest only says how to log and how long to wait. With `lenient` (DEL) a bad
// value of one of those is one of `del_warnings` and its default applies: no DEL fails for it.
Status ParseFiles(const json& root, Config& c, bool lenient) {
  if (const json* v = Get(root, Key(kTop, "dataDir"))) {
    if (!v->is_string() || !IsSafeAbsolutePath(v->get_ref<const std::string&>()))
      return Invalid("dataDir: must be an absolute path without \"..\" components");
    c.data_dir = v->get<std::string>();
  }
  auto bad = [&](std::string msg) -> Status {
    if (!lenient) return Invalid(std::move(msg));
    c.del_warnings.push_back(std::move(msg) + "; the default is used");
    return base::Ok();
  };
  auto soft = [&](const Status& s) { return s.ok() ? s : bad(s.error().msg); };
  if (const json* v = Get(root, Key(kTop, "logFile"))) {
    if (v->is_string() &&
        (v->get_ref<const std::string&>().empty() || IsSafeAbsolutePath(v->get_ref<const std::string&>())))
      c.log_file = v->get<std::string>();
    else
      RETURN_IF_ERROR(bad("logFile: must be an absolute path or empty"));
  }
  if (const json* v = Get(root, Key(kTop, "logMaxBytes"))) {
    if (uint64_t n = 0; GetUint(*v, 0, uint64_t{1} << 40, &n))
      c.log_max_bytes = n;
    else
      RETURN_IF_ERROR(bad("logMaxBytes: must be an integer number of bytes (0 = no cap), e.g. 10485760"));
  }
  RETURN_IF_ERROR(soft(ReadUint(root, Key(kTop, "lockTimeoutMs"), "lockTimeoutMs", 0, kMaxLockTimeoutMs,
                                c.lock_timeout_ms, " (milliseconds)")));
  RETURN_IF_ERROR(soft(ReadUint(root, Key(kTop, "ipamTimeoutMs"), "ipamTimeoutMs", kMinIpamTimeoutMs,
                                kMaxIpamTimeoutMs, c.ipam_timeout_ms, " (milliseconds)")));
  if (const json* v = Get(root, Key(kTop, "logLevel"))) {
    const char* fix = "use \"debug\", \"info\", \"warn\" or \"error\"";
    if (!v->is_string())
      RETURN_IF_ERROR(bad(std::string("logLevel: must be a string; ") + fix));
    else if (base::LogLevel level{}; base::ParseLogLevel(v->get_ref<const std::string&>(), &level))
      c.log_level = level;
    else
      RETURN_IF_ERROR(
          bad("logLevel: " + Quote(v->get_ref<const std::string&>()) + " is not supported; " + fix));
  }
  return base::Ok();
}

// prevResult is moved out of `root`, not copied: nothing reads it there, and the IPAM plugin is never given
// it (ipam::DelegateConfig).
Status ParseRuntimeObjects(json& root, Config& c) {
  c.prev_result = nullptr;
  c.runtime_config = json::object();
  c.args = json::object();
  if (auto v = root.find(Key(kTop, "prevResult")); v != root.end() && !v->is_null()) {
    if (!v->is_object()) return Invalid("prevResult: must be an object (a CNI result)");
    c.prev_result = std::move(*v);
    root.erase(v);
  }
  for (auto [key, out] :
       {std::pair{Key(kTop, "runtimeConfig"), &c.runtime_config}, {Key(kTop, "args"), &c.args}}) {
    if (const json* v = Get(root, key)) {
      if (!v->is_object()) return Invalid(std::string(key) + ": must be an object");
      *out = *v;
    }
  }
  return base::Ok();
}

base::Result<json> Decode(std::string_view bytes) {
  if (bytes.size() > kMaxConfigBytes)
    return Error(Code::kDecoding, "config: " + std::to_string(bytes.size()) + " bytes on stdin; at most " +
                                      std::to_string(kMaxConfigBytes) + " are accepted");
  ASSIGN_OR_RETURN(json root, base::ParseJson(bytes, "config: stdin"));
  if (!root.is_object())
    return Error(Code::kDecoding, std::string("config: must be a JSON object, got ") + root.type_name());
  return root;
}

// What the config is parsed for: ADD and CHECK refuse every mistake; DEL and GC need only the keys they use;
// a conflist entry leaves the device to the runtime.
// kDelKeys: DEL's first read, the journal's keys only (ParseDelKeys).
enum class Purpose { kAdd, kDel, kDelKeys, kEntry };

Status ParseModeBlocks(const json& root, Config& c) {
  ASSIGN_OR_RETURN(ModeSettings modes, ParseModeSettings(root, *c.mode, c.modes));
  c.mode_options = std::move(modes.options);
  c.mac = std::move(modes.mac);
  c.runtime_mac = modes.runtime_mac;
  return base::Ok();
}

Status ParseRdmaGroup(const json& root, Config& c) {
  RETURN_IF_ERROR(ParseRdma(root, c.rdma));
  if (!c.mode->moves_rdma && c.rdma.netns_mode == RdmaConfig::NetnsMode::kExclusive)
    return Invalid("rdma.netnsMode: mode " + Quote(c.mode->name) +
                   " leaves the RDMA device on the node; use \"shared\" or \"auto\"");
  return base::Ok();
}

// A key of args.cni near one erdma-cni reads (erdma_smcr for erdma-smcr): left alone, as another plugin's
// key would be, and said in the log. args.cni is shared by the chain, so nothing is refused.
void WarnNearMisses(const json& args, std::vector<std::string>& warnings) {
  const json* cni = args.is_object() ? Get(args, "cni") : nullptr;
  if (!cni || !cni->is_object()) return;
  for (const auto& [key, value] : cni->items()) {
    if (std::find(kArgsCni.keys.begin(), kArgsCni.keys.end(), key) != kArgsCni.keys.end()) continue;
    const std::string_view near = NearestKey(key, kArgsCni);
    if (near.empty()) continue;
    warnings.push_back("args.cni." + base::EscapeForDisplay(key) +
                       ": erdma-cni reads no such key, did you mean args.cni." + std::string(near) +
                       "? It is left alone");
  }
}

Status ParseSmcrGroup(const json& root, Config& c) {
  RETURN_IF_ERROR(ParseSmcr(root, c.smcr));
  ASSIGN_OR_RETURN(c.smcr_wanted, SmcrWanted(c.smcr, c.runtime_config, c.args));
  WarnNearMisses(c.args, c.warnings);
  return base::Ok();
}

// What DEL and GC use: the journal is found by name and dataDir, and is all they need of the attachment.
Status ParseJournalKeys(json& root, Config& c, bool for_del) {
  RETURN_IF_ERROR(ParseVersion(root, c));
  RETURN_IF_ERROR(ParseIdentity(root, c));
  RETURN_IF_ERROR(ParseRuntimeObjects(root, c));
  return ParseFiles(root, c, for_del);
}

// The rest: at DEL a group that does not parse keeps its defaults and is a warning, so that a config edited
// since ADD cannot block a teardown. Keeps `root` as the config's raw tree.
Status ParseRest(json root, Purpose purpose, Config& c) {
  // What a group falls back to at DEL; built only there (a pass-through ADD is paid by every pod).
  std::optional<Config> fallback;
  std::vector<std::string_view> top_keys(std::begin(kTopKeys), std::end(kTopKeys));
  for (const ModeSpec* m : c.modes)
    if (!m->options_key.empty()) top_keys.push_back(m->options_key);
  const Level top{"", top_keys};
  // At DEL a group that fails sets the `members` it parses back to their defaults.
  auto group = [&](Status s, auto... members) -> Status {
    if (s.ok() || purpose != Purpose::kDel || s.error().code != Code::kInvalidConfig) return s;
    c.del_warnings.push_back(s.error().msg);
    const Config& defaults = fallback ? *fallback : fallback.emplace();
    ((c.*members = defaults.*members), ...);
    return base::Ok();
  };
  if (purpose == Purpose::kDel) {
    // A few said one by one, the rest counted: an edited config's thousands of keys do not flood the log.
    constexpr size_t kSaid = 5;
    std::vector<std::string> unknown = UnknownKeys(root, top);
    for (size_t i = 0; i < unknown.size() && i < kSaid; ++i) c.del_warnings.push_back(std::move(unknown[i]));
    if (unknown.size() > kSaid)
      c.del_warnings.push_back("and " + std::to_string(unknown.size() - kSaid) +
                               " more keys erdma-cni does not know");
  } else {
    RETURN_IF_ERROR(RefuseUnknown(root, top));
  }
  // ParseMode sets the mode only once it is valid.
  c.mode = c.modes.front();
  RETURN_IF_ERROR(group(ParseMode(root, c)));
  RETURN_IF_ERROR(group(ParseDevice(root, purpose != Purpose::kAdd, c), &Config::device));
  RETURN_IF_ERROR(group(ParseIfName(root, c), &Config::if_name));
  RETURN_IF_ERROR(group(ReadUint(root, Key(kTop, "mtu"), "mtu", 68, 65535, c.mtu), &Config::mtu));
  RETURN_IF_ERROR(group(ParseIpam(root, c), &Config::ipam, &Config::ipam_type));
  RETURN_IF_ERROR(group(ParseAddresses(root, c)));
  RETURN_IF_ERROR(group(ParseModeBlocks(root, c), &Config::mode_options, &Config::mac, &Config::runtime_mac));
  RETURN_IF_ERROR(group(ParseRouting(root, c), &Config::routing));
  RETURN_IF_ERROR(group(ParseRdmaGroup(root, c), &Config::rdma));
  RETURN_IF_ERROR(group(ParseSmcrGroup(root, c), &Config::smcr, &Config::smcr_wanted));
  // Mode none acts on the interface the plugin before it made (its prevResult): alone it would give the pod
  // nothing and succeed. A node conflist entry (kEntry) gets its prevResult from the runtime.
  if (purpose == Purpose::kAdd && !c.mode->takes_device && c.prev_result.is_null())
    return Invalid("mode: " + Quote(c.mode->name) +
                   " adds SMC-R to the interface of the plugin before erdma-cni in a chain (its prevResult), "
                   "and there is none: alone it gives the pod nothing. Chain erdma-cni after the primary "
                   "plugin, or choose a mode that attaches a device (" +
                   ModeList(c.modes, [](const ModeSpec& s) { return s.takes_device; }) + ")");
  c.raw = std::move(root);
  return base::Ok();
}

base::Result<Config> ParseFor(ModeTable modes, std::string_view stdin_bytes, Purpose purpose) {
  if (modes.empty()) std::abort();  // a caller's bug: the plugin always has its table
  // Nothing may escape: the plugin must always answer with a CNI error.
  try {
    ASSIGN_OR_RETURN(json root, Decode(stdin_bytes));
    Config c;
    c.modes = modes;
    RETURN_IF_ERROR(ParseJournalKeys(root, c, purpose == Purpose::kDel || purpose == Purpose::kDelKeys));
    if (purpose == Purpose::kDelKeys) {
      c.raw = std::move(root);
      return c;
    }
    RETURN_IF_ERROR(ParseRest(std::move(root), purpose, c));
    return c;
  } catch (const std::exception& e) {
    return Error(Code::kDecoding, "config: cannot decode stdin", e.what());
  } catch (...) {
    return Error(Code::kDecoding, "config: cannot decode stdin");
  }
}

}  // namespace

std::string DeviceSelector::Describe() const {
  if (!via.empty()) return via;
  const char* key = "device.name";
  switch (by) {
    case By::kName: key = "device.name"; break;
    case By::kMac: key = "device.mac"; break;
    case By::kPci: key = "device.pci"; break;
    case By::kDeviceId: key = "deviceID"; break;
    case By::kRdma: key = "device.rdma"; break;
    case By::kResource: key = "device.resource"; break;
    case By::kPool: return "device.pool";
  }
  return std::string(key) + " " + Quote(value);
}

base::Result<Config> Parse(ModeTable modes, std::string_view stdin_bytes, bool for_del) {
  return ParseFor(modes, stdin_bytes, for_del ? Purpose::kDel : Purpose::kAdd);
}

base::Result<Config> ParseDelKeys(ModeTable modes, std::string_view stdin_bytes) {
  return ParseFor(modes, stdin_bytes, Purpose::kDelKeys);
}

base::Result<Config> ParseDelRest(Config keys) {
  keys.del_warnings.clear();
  try {
    json root = std::move(keys.raw);
    RETURN_IF_ERROR(ParseRest(std::move(root), Purpose::kDel, keys));
    return keys;
  } catch (const std::exception& e) {
    return Error(Code::kDecoding, "config: cannot decode stdin", e.what());
  }
}

base::Result<Config> ParseChainEntry(ModeTable modes, std::string_view config_bytes) {
  return ParseFor(modes, config_bytes, Purpose::kEntry);
}

std::string OneDeviceForEveryPod(const json& entry) {
  if (!entry.is_object()) return "";
  if (entry.contains("deviceID")) return "deviceID";
  auto device = entry.find("device");
  if (device == entry.end() || !device->is_object()) return "";
  for (const char* key : {"name", "mac", "pci", "rdma"})
    if (device->contains(key)) return std::string("device.") + key;
  return "";
}

bool AsksTheKubelet(const json& entry) {
  if (!entry.is_object()) return false;
  auto device = entry.find("device");
  return device != entry.end() && device->is_object() && device->contains("resource");
}

}  // namespace conf

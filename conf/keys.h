// The keys erdma-cni accepts at each level of its config: the one list each level has, read by the parser
// through Key() and used to refuse the rest. A mode's own level is its driver's.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace conf {

/// One object of the config and every key it accepts.
struct Level {
  std::string_view path;  ///< "" for the top level, else "device", "device.pool", ...
  std::span<const std::string_view> keys;
};

/// The top level: erdma-cni's own keys, and what CNI, the runtimes and Multus add (cniVersion, name, type,
/// prevResult, runtimeConfig, capabilities, args, dns, deviceID, pciBusID, cni.dev/valid-attachments). Each
/// mode's options key (ModeSpec::options_key) is accepted with them.
inline constexpr std::string_view kTopKeys[] = {"cniVersion",  "cniVersions",   "name",
                                                "type",        "mode",          "device",
                                                "deviceID",    "pciBusID",      "ifName",
                                                "mtu",         "ipam",          "addresses",
                                                "routing",     "rdma",          "smcr",
                                                "dataDir",     "logFile",       "logLevel",
                                                "logMaxBytes", "lockTimeoutMs", "ipamTimeoutMs",
                                                "prevResult",  "runtimeConfig", "capabilities",
                                                "args",        "dns",           "cni.dev/valid-attachments"};
inline constexpr Level kTop{"", kTopKeys};

inline constexpr std::string_view kDeviceKeys[] = {"name",     "mac",  "pci",   "rdma",
                                                   "resource", "pool", "count", "required"};
inline constexpr Level kDevice{"device", kDeviceKeys};

inline constexpr std::string_view kPoolKeys[] = {"names", "pciVendor", "rdmaDriver"};
inline constexpr Level kPool{"device.pool", kPoolKeys};

inline constexpr std::string_view kRoutingKeys[] = {"table", "rulePriority", "routeMetric", "defaultRoute"};
inline constexpr Level kRouting{"routing", kRoutingKeys};

inline constexpr std::string_view kRdmaKeys[] = {"netnsMode", "setSystemMode", "required", "softRoce"};
inline constexpr Level kRdma{"rdma", kRdmaKeys};

/// smcr.sysctls is a map of sysctl names, not a level.
inline constexpr std::string_view kSmcrKeys[] = {"enable", "sysctls", "disableIPv6",
                                                 "pnetId", "ueid",    "onUnsupported"};
inline constexpr Level kSmcr{"smcr", kSmcrKeys};

/// What erdma-cni reads of `args.cni` (kSmcrAnnotation, its short form, and the runtime's MAC). Every plugin
/// of a chain shares `args.cni`: a key off this list is another's, and only one close to these is a typo.
inline constexpr std::string_view kArgsCniKeys[] = {"network.alibabacloud.com/erdma-smcr", "erdma-smcr",
                                                    "mac"};
inline constexpr Level kArgsCni{"args.cni", kArgsCniKeys};

/// `key` when `level` accepts it; a key the list lacks does not compile,
/// so the parser cannot read a key that the refusal would turn away.
consteval const char* Key(const Level& level, const char* key) {
  for (std::string_view k : level.keys)
    if (k == key) return key;
  throw "conf::Key: the key is not in its level's list (conf/keys.h)";
}

/// The message for each key of `obj` that `level` does not accept (keys set to null, which the parser reads
/// as unset, aside): the key's path, the nearest accepted key by edit distance when one is close, else the
/// keys the level accepts, and the fix.
std::vector<std::string> UnknownKeys(const nlohmann::json& obj, const Level& level);

/// Code 7 with the first of UnknownKeys(obj, level), if any.
base::Status RefuseUnknown(const nlohmann::json& obj, const Level& level);

/// The accepted key nearest `key` (optimal string alignment distance, case
/// ignored) when it is close enough to be a typo; empty otherwise.
std::string_view NearestKey(std::string_view key, const Level& level);

}  // namespace conf

// The `smcr` section and the per-pod SMC-R switch: the pod annotation network.alibabacloud.com/erdma-smcr,
// from runtimeConfig (containerd, CRI-O) or args.cni (Multus).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace conf {

inline constexpr const char* kSmcrAnnotation = "network.alibabacloud.com/erdma-smcr";
inline constexpr const char* kPodAnnotationsCapability = "io.kubernetes.cri.pod-annotations";

struct SmcrConfig {
  enum class Enable { kAnnotation, kAlways, kNever };
  Enable enable = Enable::kAnnotation;
  /// Written inside the pod netns, in this order; names validated (net.*).
  std::vector<std::pair<std::string, std::string>> sysctls = {{"net.smc.tcp2smc", "1"}};
  bool disable_ipv6 = true;
  std::string pnet_id = "auto";      ///< "auto": the eRDMA netdev's MAC, upper-case hex, no colons
  std::string ueid;                  ///< SMC-Rv2 User EID; "" = none
  bool on_unsupported_error = true;  ///< false: "warn"
};

/// Parses `smcr` from the config root (code 7 naming smcr.<key>).
base::Status ParseSmcr(const nlohmann::json& root, SmcrConfig& out);

/// Whether this pod wants SMC-R: `enable`, or the annotation from
/// runtimeConfig["io.kubernetes.cri.pod-annotations"] or args.cni (the same key, or "erdma-smcr"). Values
/// parse like Kubernetes booleans; anything else is code 7 naming the annotation.
base::Result<bool> SmcrWanted(const SmcrConfig& cfg, const nlohmann::json& runtime_config,
                              const nlohmann::json& args);

}  // namespace conf

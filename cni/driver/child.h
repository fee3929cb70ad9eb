// Modes macvlan and ipvlan: a child of the node device is born in the pod.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cni/driver/driver.h"
#include "conf/modes.h"

namespace cni {

/// The kernel's macvlan modes (MACVLAN_MODE_*).
enum class MacvlanMode : uint32_t { kPrivate = 1, kVepa = 2, kBridge = 4, kPassthru = 8, kSource = 16 };
/// The kernel's ipvlan modes (IPVLAN_MODE_*).
enum class IpvlanMode : uint16_t { kL2 = 0, kL3 = 1, kL3s = 2 };

const char* MacvlanModeName(MacvlanMode m);

/// The `macvlan` block (its `mac` is the config's MAC, conf::Config::mac).
struct MacvlanOptions : conf::ModeOptions {
  MacvlanMode mode = MacvlanMode::kBridge;
  std::vector<std::string> source_macs;  ///< mode source: the senders it accepts
};

/// The `ipvlan` block.
struct IpvlanOptions : conf::ModeOptions {
  IpvlanMode mode = IpvlanMode::kL2;
};

/// The rows of the two child modes (cni/driver/registry.cpp).
extern const conf::ModeSpec kMacvlanMode;
extern const conf::ModeSpec kIpvlanMode;

/// The child of `parent` that ADD creates in the pod as `pod_name` (the child driver's arrival step).
StepChild ChildStep(const conf::Config& cfg, const std::optional<std::string>& mac,
                    const netlink::LinkInfo& parent, const std::string& pod_name);

}  // namespace cni

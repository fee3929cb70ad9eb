// What a config says of its mode beyond the name: the mode's own options (parsed by its driver, through its
// row) and the MAC the pod's interface gets; and what the pod asks for beyond its network's config.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "conf/modes.h"
#include "netlink/ip.h"

namespace conf {

struct Config;

/// A MAC a device may have (unicast: the group bit of the first octet clear), lower case; nullopt otherwise.
std::optional<std::string> UnicastMac(const nlohmann::json& v);
/// The fix for a MAC UnicastMac refuses, after its key.
inline constexpr const char* kMacFix = ": must be a unicast MAC address like \"02:00:00:3b:00:01\"";

/// What the mode blocks of one config say.
struct ModeSettings {
  std::shared_ptr<const ModeOptions> options;  ///< the mode's own (ModeSpec::parse)
  /// The MAC the pod's interface gets (sets_mac modes): runtimeConfig.mac (capability "mac"), then
  /// args.cni.mac, then the mode block's.
  std::optional<std::string> mac;
  bool runtime_mac = false;  ///< `mac` came from runtimeConfig or args.cni
};

/// Parses `mode`'s options, runtimeConfig.mac/infinibandGUID and args.cni.mac. A block of another mode of
/// `modes`, or a MAC or GUID the mode cannot honour, is code 7 naming the key and the fix.
base::Result<ModeSettings> ParseModeSettings(const nlohmann::json& root, const ModeSpec& mode,
                                             ModeTable modes);

/// What the pod asks for beyond its network's config, read once at ADD (ReadPodRequests): the run's own,
/// never written into the Config.
struct PodRequests {
  /// The MAC the pod's interface gets: the config's (Config::mac), unless CNI_ARGS MAC= names one and the
  /// runtime's (runtimeConfig.mac, args.cni.mac) does not.
  std::optional<std::string> mac;
  struct Ip {
    netlink::IpPrefix ip;
    bool exact = false;  ///< a length was given and must match
  };
  std::vector<Ip> ips;  ///< the addresses asked for
  std::string ips_key;  ///< where they came from: "runtimeConfig.ips" or "CNI_ARGS IP"
};

/// The pod's own requests: runtimeConfig.ips, and CNI_ARGS MAC= and IP= (podman's --mac-address, --ip) when
/// standalone; chained, they are the primary plugin's. A MAC is honoured in the modes that set one (sets_mac)
/// and refused (code 7, naming the mode) in the others. Addresses go to IPAM unchanged, are checked against
/// the device's with addresses "inherit", and are refused with addresses "none".
base::Result<PodRequests> ReadPodRequests(const Config& c,
                                          const std::map<std::string, std::string>& cni_args);

}  // namespace conf

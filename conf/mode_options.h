// The options of the attachment modes that make or borrow a device instead of moving a whole one: macvlan and
// ipvlan children of a node device, and SR-IOV VFs whose settings go through their PF.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "conf/modes.h"
#include "netlink/ip.h"

namespace conf {

struct Config;

/// The kernel's macvlan modes (MACVLAN_MODE_*).
enum class MacvlanMode : uint32_t { kPrivate = 1, kVepa = 2, kBridge = 4, kPassthru = 8, kSource = 16 };
/// The kernel's ipvlan modes (IPVLAN_MODE_*).
enum class IpvlanMode : uint16_t { kL2 = 0, kL3 = 1, kL3s = 2 };

const char* MacvlanModeName(MacvlanMode m);
const char* IpvlanModeName(IpvlanMode m);

struct MacvlanConfig {
  MacvlanMode mode = MacvlanMode::kBridge;
  std::vector<std::string> source_macs;  ///< mode source: the senders it accepts
};

struct IpvlanConfig {
  IpvlanMode mode = IpvlanMode::kL2;
};

/// VF settings applied through the PF before the VF moves; unset = left alone.
struct VfConfig {
  enum class LinkState : uint32_t { kAuto = 0, kEnable = 1, kDisable = 2 };  ///< IFLA_VF_LINK_STATE_*
  std::optional<uint32_t> vlan;                                              ///< 0..4094 (0 = untagged)
  std::optional<uint32_t> vlan_qos;                                          ///< 0..7, needs vlan
  std::optional<bool> spoofchk;
  std::optional<bool> trust;
  std::optional<LinkState> link_state;
  std::optional<uint32_t> min_tx_rate;  ///< Mbps
  std::optional<uint32_t> max_tx_rate;  ///< Mbps, 0 = unlimited
  std::optional<std::string> ib_guid;   ///< InfiniBand VF node/port GUID "00:11:..:77"
  bool any() const {
    return vlan || vlan_qos || spoofchk || trust || link_state || min_tx_rate || max_tx_rate || ib_guid;
  }
};

const char* LinkStateName(VfConfig::LinkState s);

/// What the mode blocks of one config say.
struct ModeOptions {
  MacvlanConfig macvlan;
  IpvlanConfig ipvlan;
  VfConfig vf;
  /// The MAC the pod's interface gets (macvlan child, VF): runtimeConfig.mac
  /// (capability "mac"), then args.cni.mac, then macvlan.mac / vf.mac.
  std::optional<std::string> mac;
  bool runtime_mac = false;  ///< `mac` came from runtimeConfig or args.cni
};

/// Parses `macvlan`, `ipvlan`, `vf`, runtimeConfig.mac/infinibandGUID and
/// args.cni.mac for `mode` ("move", "macvlan", ...). A block for another mode,
/// or a MAC the mode cannot honour, is code 7 naming the key and the fix.
base::Result<ModeOptions> ParseModeOptions(const nlohmann::json& root, Mode mode);

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

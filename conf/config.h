// The network configuration erdma-cni reads on stdin, parsed once into an immutable, validated value.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "conf/mode_options.h"
#include "conf/modes.h"
#include "conf/rdma_config.h"
#include "conf/smcr_config.h"

namespace conf {

enum class AddressMode { kInherit, kIpam, kNone };

/// `ipamTimeoutMs`: its default and bounds.
inline constexpr uint32_t kDefaultIpamTimeoutMs = 60000;
inline constexpr uint32_t kMinIpamTimeoutMs = 100;
inline constexpr uint32_t kMaxIpamTimeoutMs = 300000;

/// The most devices one attachment takes (`device.count`).
inline constexpr uint32_t kMaxDevices = 32;

/// `device.pool`: the node devices a pod may be given where no allocator names one (Terway's `eni-<n>`, the
/// controller's all-devices mode, no device plugin). A device is a candidate when it matches every key set.
struct DevicePool {
  std::vector<std::string> names;  ///< netdev names ("names"; empty: any)
  std::string pci_vendor;          ///< "pciVendor", "0x1ded" in lower case ("": any)
  std::string rdma_driver;         ///< "rdmaDriver": the paired RDMA device's driver ("": any)
};

/// How the host netdev is chosen. Exactly one selector, or the device ID the
/// runtime/Multus injected (top-level `deviceID`, `runtimeConfig.deviceID`).
struct DeviceSelector {
  /// kResource: the device the kubelet's device plugin gave the pod, asked of the kubelet at ADD (run.cpp),
  /// which turns it into a kDeviceId. kPool: free devices of `pool`, chosen at ADD (cni/device/choice.h).
  enum class By { kName, kMac, kPci, kRdma, kDeviceId, kResource, kPool };
  By by = By::kName;
  /// name, lower-case MAC, PCI address "0000:3b:00.1", RDMA device, the raw
  /// device ID, or the resource name ("aliyun/erdma")
  std::string value;
  /// How a device ID was found, for messages: `device.resource "aliyun/erdma"
  /// (the kubelet gave erdma_1/17)`; empty when the config named it.
  std::string via;
  /// "count": how many devices one attachment takes (kResource, kPool);
  /// `all`: every device the kubelet gave the pod (every free one of a pool).
  uint32_t count = 1;
  bool all = false;
  /// "pool": where devices are chosen from (kPool, or kResource whose IDs
  /// name no device, like Terway's `eni-<n>`).
  std::optional<DevicePool> pool = std::nullopt;
  /// "required": in a chained config, a pod that holds no device of `resource` (or, for a `pool` without
  /// `resource`, did not opt in) passes through unchanged; `required` makes that an error instead.
  bool required = false;
  std::string Describe() const;  ///< e.g. `device.name "eth1"`
  /// Several devices, each its own interface in the pod (cni/command/group.h).
  bool Several() const { return all || count > 1; }
};

struct Routing {
  std::optional<uint32_t> table;  ///< nullopt = "auto"
  uint32_t rule_priority = 200;
  uint32_t route_metric = 200;
  bool default_route = true;
};

struct Config {
  std::string cni_version;  ///< the version results are written in (negotiated)
  std::string name;         ///< network name; required
  std::string type;

  /// The table the config was parsed with, and its row of it ("mode"; the table's first when absent). Null
  /// only before a parse has read the mode (ParseDelKeys).
  ModeTable modes;
  const ModeSpec* mode = nullptr;
  /// The mode's own options (ModeSpec::parse; the driver reads them with OptionsOf), null when it has none.
  std::shared_ptr<const ModeOptions> mode_options;
  DeviceSelector device;  ///< the device the mode takes: moves, makes a child of, or hands over
  /// The MAC the pod's interface gets (sets_mac modes): the mode block's, args.cni's or the runtime's.
  std::optional<std::string> mac;
  bool runtime_mac = false;        ///< `mac` is the runtime's (runtimeConfig.mac, args.cni.mac)
  std::string if_name = "erdma0";  ///< our interface's name when chained
  std::optional<uint32_t> mtu;
  AddressMode addresses = AddressMode::kInherit;
  nlohmann::json ipam;    ///< the `ipam` object (null when absent)
  std::string ipam_type;  ///< ipam.type
  Routing routing;
  RdmaConfig rdma;
  SmcrConfig smcr;
  bool smcr_wanted = false;  ///< this pod asked for SMC-R (enable + annotation)
  /// On tmpfs: docs/decisions/state-on-tmpfs.md.
  std::string data_dir = "/run/erdma-cni";
  std::string log_file;  ///< empty: no log file (errors still go to stderr)
  /// How long ADD and DEL wait for a device's claim lock held by another
  /// invocation before failing with code 11 (0: try once).
  uint32_t lock_timeout_ms = 10000;
  /// How long one run of the IPAM plugin may take before it is killed with
  /// its process group (`ipamTimeoutMs`).
  uint32_t ipam_timeout_ms = kDefaultIpamTimeoutMs;
  base::LogLevel log_level = base::LogLevel::kInfo;
  uint64_t log_max_bytes = 10 << 20;  ///< logFile is rotated to <logFile>.1 at this size (0: never)

  nlohmann::json prev_result;     ///< null when standalone
  nlohmann::json runtime_config;  ///< object (maybe empty)
  nlohmann::json args;            ///< the `args` object (maybe empty)
  nlohmann::json raw;             ///< the stdin object but prevResult, for IPAM delegation
  /// DEL and GC only: each key group that did not parse (left at its
  /// defaults) and each unknown key, one message each, for the log.
  std::vector<std::string> del_warnings;
  /// Every command: what the config holds that erdma-cni leaves alone but its author likely meant for it (a
  /// near miss of a key it reads in args.cni), one message each, for the log.
  std::vector<std::string> warnings;

  bool chained() const { return !prev_result.is_null(); }
  /// The pod gets a new link, a child of the node device, which stays.
  bool child() const { return mode && mode->child; }
};

/// Largest stdin accepted.
inline constexpr size_t kMaxConfigBytes = 1 << 20;

/// Parses and validates stdin. Errors: kDecoding (not a JSON object, too big), kIncompatibleVersion
/// (cniVersion unsupported), kInvalidConfig (a key erdma-cni does not know at a level it owns, naming the
/// nearest known key; or a known key with a wrong type or value; the message names the key path and the fix).
/// Inside ipam, runtimeConfig, args, capabilities, prevResult and dns any key goes. `for_del`: DEL and GC
/// need only the journal's keys (ParseJournalKeys in config.cpp holds the list); any other group that does
/// not parse keeps its defaults (a broken ipam: no IPAM) and, like each unknown key, becomes one of
/// `del_warnings`. No device is then needed. `modes`: the modes the config may name (the plugin's:
/// cni::Modes()).
base::Result<Config> Parse(ModeTable modes, std::string_view stdin_bytes, bool for_del = false);

/// DEL's first read: the journal's keys Parse(.., for_del=true) needs to find the attachment
/// (ParseJournalKeys), with the same errors. Nothing else is read until ParseDelRest: a DEL that finds no
/// state of its own (every pod that passed through) never reads the rest.
base::Result<Config> ParseDelKeys(ModeTable modes, std::string_view stdin_bytes);

/// The whole config from what ParseDelKeys read (its `raw`), as Parse(.., for_del=true) reads it; its
/// `del_warnings` are those of the rest only (each group that does not parse, each unknown key).
base::Result<Config> ParseDelRest(Config keys);

/// A conflist entry as the runtime will hand it over (cniVersion and name merged in): every check of ADD,
/// except that the device may be left to the runtime (deviceID).
base::Result<Config> ParseChainEntry(ModeTable modes, std::string_view config_bytes);

/// The key of a chained entry that selects one node device whatever the pod ("device.name", "deviceID", ...),
/// or "". In a node conflist the entry runs for every pod of the node: such a device goes to the first pod
/// and every later one fails (in a NAD's own chain naming a device is right: the caller knows which it is).
std::string OneDeviceForEveryPod(const nlohmann::json& entry);

/// Whether the entry asks the kubelet for each pod's devices (device.resource): then every ADD needs the
/// pod-resources socket of the node file to answer.
bool AsksTheKubelet(const nlohmann::json& entry);

}  // namespace conf

// The attachment modes, one row each: the one definition the config parser, its messages, the driver registry
// (cni/driver/registry.h) and the docs test read. A new mode is a row here, its driver and its docs row.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace conf {

enum class Mode { kMove, kMacvlan, kIpvlan, kVf, kNone };

/// What the config parser must know of a mode.
struct ModeSpec {
  Mode mode;
  std::string_view name;         ///< its value of "mode"
  std::string_view options_key;  ///< its own options' key ("macvlan"); empty when it has none
  bool takes_device;             ///< false: it takes nothing from the node (none)
  bool from_pool;                ///< device.pool and a device.count above 1 are allowed
  bool child;                    ///< a macvlan/ipvlan child of the node device: addresses from IPAM
  bool sets_mac;                 ///< honours the MAC the config or the runtime asks for
  bool moves_rdma;               ///< rdma.netnsMode "exclusive" is allowed (none: the RDMA device stays)
  std::string_view pod_gets;     ///< docs/modes.md's "the pod gets" for it
};

/// Every mode, in the order messages list them.
std::span<const ModeSpec> Modes();
const ModeSpec& SpecOf(Mode m);
const char* ModeName(Mode m);
std::optional<Mode> ModeNamed(std::string_view name);
/// "\"move\", \"macvlan\" or \"none\"": the names of the modes `which` accepts.
std::string ModeList(bool (*which)(const ModeSpec&));

}  // namespace conf

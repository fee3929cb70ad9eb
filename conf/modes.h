// What the config parser must know of an attachment mode: its row. The rows are the plugin's (its registry,
// cni/driver/registry.h, one row per driver); every parse is given the table, so conf/ names no mode.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace cni {
class Driver;  // the plugin's, opaque here
}

namespace conf {

/// A mode's own options: the typed struct its driver parses from the config (ModeSpec::parse) and reads back
/// (OptionsOf).
struct ModeOptions {
  virtual ~ModeOptions() = default;
};

/// What a mode's parser is given: the whole config, and its own block (ModeSpec::options_key; null when
/// absent).
struct ModeInput {
  const nlohmann::json& root;
  const nlohmann::json* block;
};

/// What a mode's parser makes of the config.
struct ParsedMode {
  std::shared_ptr<const ModeOptions> options;
  std::optional<std::string> mac;  ///< the MAC its block gives the pod's interface (sets_mac modes)
};

struct ModeSpec {
  // A row names what its mode does; what it leaves out is off.
  std::string_view name;           ///< its value of "mode"
  std::string_view options_key{};  ///< its own options' key at the top level; empty when it has none
  bool takes_device = false;       ///< false: it takes nothing from the node, acts on prevResult's interface
  bool from_pool = false;          ///< device.pool and a device.count above 1 are allowed
  bool child = false;              ///< a child of the node device: addresses from IPAM
  bool sets_mac = false;           ///< honours the MAC the config or the runtime asks for
  bool sets_guid = false;          ///< reads runtimeConfig.infinibandGUID
  bool moves_rdma = false;         ///< rdma.netnsMode "exclusive" is allowed
  std::string_view pod_gets;       ///< docs/modes.md's "the pod gets" for it
  /// Parses the options (code 7 naming the key and the fix); null: the mode has none.
  base::Result<ParsedMode> (*parse)(const ModeInput& in) = nullptr;
  /// Whether the options allow setting the MAC asked for at `key` (a sets_mac mode); null: they do.
  base::Status (*check_mac)(const ModeOptions* options, const std::string& key) = nullptr;
  const cni::Driver& (*driver)() = nullptr;
};

/// The modes a config may name, the default first, in the order messages list them.
using ModeTable = std::span<const ModeSpec* const>;

const ModeSpec* ModeNamed(ModeTable modes, std::string_view name);
/// "\"move\", \"macvlan\" or \"none\"": the names of the modes `which` accepts (null: all).
std::string ModeList(ModeTable modes, bool (*which)(const ModeSpec&));

/// The options of type T a config's mode parsed; T's defaults when it parsed none (a DEL whose block no
/// longer parses).
template <class T>
const T& OptionsOf(const std::shared_ptr<const ModeOptions>& options) {
  static const T kDefaults;
  const T* o = dynamic_cast<const T*>(options.get());
  return o ? *o : kDefaults;
}

}  // namespace conf

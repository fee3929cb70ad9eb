// The `rdma` section of the config: what happens to the RDMA device paired with the pod's netdev.
#pragma once

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace conf {

struct RdmaConfig {
  enum class NetnsMode { kAuto, kShared, kExclusive };
  NetnsMode netns_mode = NetnsMode::kAuto;  ///< auto: follow the kernel's current mode
  bool set_system_mode = false;             ///< switch the kernel's mode when it differs
  /// No paired RDMA device (or no RDMA in the kernel): error, or a warning. Defaults to true when the `rdma`
  /// object is present, false when absent, so that a plain netdev config keeps working on nodes without RDMA.
  bool required = false;
  bool soft_roce = false;  ///< create a Soft-RoCE (rxe) device on the pod's interface
  bool present = false;    ///< the config has an `rdma` object
};

/// Parses `rdma` from the config root; code 7 naming `rdma.<key>` on error.
base::Status ParseRdma(const nlohmann::json& root, RdmaConfig& out);

}  // namespace conf

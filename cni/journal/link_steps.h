// The pod-side link's steps: the device moved in (or a child made), its MAC,
// MTU and admin state; and putting a moved device back on the node.
#pragma once

#include <optional>
#include <string>

#include "cni/journal/step_env.h"
#include "netlink/kernel.h"

namespace cni {

struct DeviceOrigin;

struct StepMove {  ///< device moved into the pod as pod_name; inverse: home as origin
  static constexpr const char* kOp = "move";
  std::string pod_name;
};

struct StepChild {  ///< macvlan/ipvlan child created in the pod as spec.name; inverse: deleted
  static constexpr const char* kOp = "child";
  std::string parent;           ///< the node device's name
  netlink::ChildLinkSpec spec;  ///< what was asked of the kernel (mtu is left to StepMtu)
};

struct StepMtu {  ///< pod-side MTU changed; inverse: taken away by the move home
  static constexpr const char* kOp = "mtu";
  static constexpr bool kOnLink = true;
  uint32_t mtu = 0;
};

struct StepUp {  ///< pod-side link set up
  static constexpr const char* kOp = "up";
  static constexpr bool kOnLink = true;
};

struct StepMac {  ///< pod-side MAC set; inverse: the move home restores the node MAC
  static constexpr const char* kOp = "mac";
  static constexpr bool kOnLink = true;
  std::string mac;
};

CNI_STEP(StepMove)
CNI_STEP(StepChild)
CNI_STEP(StepMtu)
CNI_STEP(StepUp)
CNI_STEP(StepMac)

/// Puts the device back on the node exactly as `origin` says: finds it in the pod or already on the node
/// (FindHome), moves and renames it in one message, restores MAC, MTU, addresses, admin state and routes. It
/// is also recognised by `pod_mac`, the MAC a StepMac gave it ("" = none). kNameTaken when another link holds
/// the node name; success with a warning when the device is nowhere.
base::Status MoveHome(const DeviceOrigin& origin, const std::string& pod_name, StepEnv& env,
                      const std::string& pod_mac = "");

/// Where MoveHome would find the device of `origin` on the node without its pod: under its node name, or
/// handed back by the kernel after the pod netns died (its pod-side name or devN, its recorded index);
/// nullopt when it is not on the node.
base::Result<std::optional<netlink::LinkInfo>> FindHome(const DeviceOrigin& origin,
                                                        const std::string& pod_name, netlink::Kernel& host,
                                                        const std::string& pod_mac = "");

/// Inverse of a StepChild: deletes the child from the pod if it is there and
/// is ours (kind, and MAC when one was asked for). Gone counts as done.
base::Status DeleteChild(const StepChild& child, StepEnv& env);

}  // namespace cni

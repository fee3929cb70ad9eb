// The pod-side link's steps: moved in or made, its MAC, MTU and state (undo: cni/journal/move_home.h).
#pragma once

#include <optional>
#include <string>

#include "cni/core/step_env.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

struct DeviceOrigin;

struct StepMove {  ///< device moved into the pod as pod_name; inverse: home as origin
  static constexpr const char* kOp = "move";
  std::string pod_name;
};

struct StepChild {  ///< a child link (netlink::IsChildKind) created in the pod as spec.name; inverse: deleted
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

}  // namespace cni

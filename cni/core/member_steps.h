// A group's member (cni/command/group.h): journaled here; the group adds, deletes and checks it itself.
#pragma once

#include <string>

#include "cni/core/step_env.h"

namespace cni {

struct StepMember {  ///< a group's attachment of one device (cni/command/group.h); inverse: its DEL
  static constexpr const char* kOp = "member";
  std::string pod_name;  ///< its interface in the pod, and the key of its own state file
  std::string device;    ///< the device ID or name it was given
  std::string why;       ///< why that device: the kubelet's allocation, or the pool's preference
};

CNI_STEP(StepMember)

}  // namespace cni

// SMC-R's steps: the pod's pnet table entry, and the node-wide User EID.
#pragma once

#include <string>

#include "cni/core/step_env.h"
#include "netlink/smc_kernel.h"

namespace cni {

struct StepPnet {  ///< SMC pnet table entry added in the pod; inverse: removed
  static constexpr const char* kOp = "pnet";
  netlink::PnetEntry entry;
};

struct StepUeid {  ///< SMC-Rv2 User EID added (node-wide); inverse: removed unless another attachment uses it
  static constexpr const char* kOp = "ueid";
  std::string ueid;
};

CNI_STEP(StepPnet)
CNI_STEP(StepUeid)

}  // namespace cni

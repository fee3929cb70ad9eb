// A sysctl written in the pod (SMC-R's, disable_ipv6), its old value kept.
#pragma once

#include <string>

#include "cni/core/step_env.h"

namespace cni {

struct StepSysctl {  ///< sysctl written in the pod; inverse: the old value back
  static constexpr const char* kOp = "sysctl";
  std::string name;
  std::string value;
  std::string old;
};

CNI_STEP(StepSysctl)

}  // namespace cni

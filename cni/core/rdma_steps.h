// The RDMA steps: the kernel's RDMA netns mode switched (setSystemMode), the paired device moved into the pod
// (exclusive mode), or a Soft-RoCE device made on the pod's interface.
#pragma once

#include <string>

#include "cni/core/step_env.h"

namespace cni {

struct StepRdmaMode {  ///< setSystemMode: the kernel's RDMA netns mode switched; node-wide, kept on undo
  static constexpr const char* kOp = "rdma-mode";
  std::string mode;  ///< "shared" or "exclusive"
  std::string old;
};

struct StepRdmaMove {  ///< exclusive mode: RDMA device moved into the pod; inverse: back to the node
  static constexpr const char* kOp = "rdma-move";
  std::string device;
};

struct StepSoftRdma {  ///< Soft-RoCE device created on the pod's interface; inverse: deleted
  static constexpr const char* kOp = "rdma-soft";
  std::string device;
};

CNI_STEP(StepRdmaMode)
CNI_STEP(StepRdmaMove)
CNI_STEP(StepSoftRdma)

}  // namespace cni

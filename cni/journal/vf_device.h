// A VF's settings through its PF: what StepVf (cni/core/vf_steps.h) applies, puts back and checks.
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "cni/core/vf_steps.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/vf_kernel.h"

namespace cni {

/// What the PF reports of VF `vf` in `vfs`; null when it reports none.
const netlink::VfState* FindVfState(const std::vector<netlink::VfState>& vfs, uint32_t vf);

/// Applies a StepVf through the PF (nothing when `applied` is empty).
base::Status ApplyVf(const StepVf& step, netlink::Vf* vfs);

/// Inverse of a StepVf: `old` set back through the PF (found by index, or by name if its index changed). A PF
/// that is gone, or a VF it no longer has (SR-IOV turned off), counts as done with a warning. When the VF's
/// netdev is on the node carrying the MAC ADD gave it, its own MAC goes back too.
base::Status RestoreVf(const StepVf& step, netlink::Kernel& host, netlink::Vf* vfs);

/// CHECK: each member ADD applied still has its value.
base::Status CheckVf(const StepVf& step, netlink::Vf& vfs);

}  // namespace cni

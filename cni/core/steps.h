// The journal's steps: each type defined once in its family's header and file; the dispatch over Step.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "base/error.h"
#include "cni/core/ip_steps.h"
#include "cni/core/json_fields.h"
#include "cni/core/link_steps.h"
#include "cni/core/member_steps.h"
#include "cni/core/rdma_steps.h"
#include "cni/core/smc_steps.h"
#include "cni/core/step_env.h"
#include "cni/core/sysctl_steps.h"
#include "cni/core/vf_steps.h"

namespace cni {

using Step =
    std::variant<StepIpam, StepMove, StepChild, StepMtu, StepAddr, StepUp, StepRoute, StepRule, StepRdmaMode,
                 StepRdmaMove, StepSoftRdma, StepSysctl, StepPnet, StepUeid, StepVf, StepMac, StepMember>;

/// The last step of type T in `steps`, or null.
template <class T>
const T* FindStep(const std::vector<Step>& steps) {
  const T* found = nullptr;
  for (const Step& s : steps)
    if (const T* t = std::get_if<T>(&s)) found = t;
  return found;
}

/// Steps without a pod-side index to bind.
inline void BindPodIndex(auto&, int) {}

/// The step's op as the state file spells it ("move", "child", "addr", ...).
const char* StepOp(const Step& step);
/// Every op, in the order of the Step variant (for fault-point coverage).
std::vector<std::string> AllStepOps();
/// Short text for logs and errors: "move eth1 -> erdma0", "rule from 10.9.0.5 lookup 200".
std::string DescribeStep(const Step& step);
/// Whether the step is on the pod-side link itself (kOnLink).
bool OnLink(const Step& step);
/// One journal step as the state file spells it, and back (a VF's claim keeps its StepVf).
nlohmann::json StepToJson(const Step& step);
/// Writing only: the step's members, its op first (StepToJson's, as text).
void StepFields(JsonFields& f, const Step& step);
base::Result<Step> StepFromJson(const nlohmann::json& j);
base::Status ApplyStep(const Step& step, const AttachmentState& state, StepEnv& env);
base::Status UndoStep(const Step& step, const UndoEnv& u, StepEnv& env);
base::Status CheckStep(const Step& step, CheckEnv& env);
/// One step as ValidateState checks it (a VF claim's StepVf: table 0).
base::Status ValidateStep(const Step& step, const StepSite& at = {"steps[0].", 0});

}  // namespace cni

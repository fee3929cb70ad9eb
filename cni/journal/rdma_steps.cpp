#include "cni/core/rdma_steps.h"

#include <cerrno>

#include "base/log.h"
#include "cni/journal/rdma_device.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

Status ValidDevice(const std::string& device, const StepSite& at) {
  if (!conf::IsValidDeviceId(device) || device.size() > 64)
    return BadValue(at.field_prefix + "device", device,
                    "an RDMA device name (printable ASCII, no whitespace)");
  return base::Ok();
}

std::optional<netlink::NetnsMode> ModeNamed(const std::string& name) {
  for (auto m : {netlink::NetnsMode::kShared, netlink::NetnsMode::kExclusive})
    if (name == netlink::NetnsModeName(m)) return m;
  return std::nullopt;
}

}  // namespace

void Fields(JsonFields& f, StepRdmaMode& s) { f("mode", s.mode)("old", s.old); }
std::string Describe(const StepRdmaMode& s) {
  return "switch the RDMA netns mode from " + s.old + " to " + s.mode;
}
Status Apply(const StepRdmaMode& s, const AttachmentState&, StepEnv& env) {
  if (!env.host_rdma) return Error(Code::kRdmaUnavailable, "no RDMA netlink on the node");
  const netlink::NetnsMode want = ModeNamed(s.mode).value_or(netlink::NetnsMode::kShared);
  Status st = env.host_rdma->SetNetnsMode(want);
  if (!st.ok() && st.error().sys_errno == EBUSY)
    return Error(Code::kRdmaMode,
                 "rdma.setSystemMode: the kernel refuses to switch the RDMA netns mode to " + s.mode +
                     " while other network namespaces exist (EBUSY); " + NetnsModeBootFix(want),
                 st.error().details);
  if (!st.ok()) return std::move(st).error().WithContext("rdma.setSystemMode");
  base::Log::Info("RDMA netns mode switched to " + s.mode);
  return base::Ok();
}
// The mode is the node's, others rely on it, and the kernel refuses the way back while the pod netns exists.
Status Undo(const StepRdmaMode& s, const UndoEnv&, StepEnv&) {
  base::Log::Info("the RDMA netns mode stays " + s.mode + " (node-wide; rdma.setSystemMode switched it)");
  return base::Ok();
}
Status Validate(const StepRdmaMode& s, const StepSite& at) {
  if (!ModeNamed(s.mode)) return BadValue(at.field_prefix + "mode", s.mode, "\"shared\" or \"exclusive\"");
  if (!ModeNamed(s.old)) return BadValue(at.field_prefix + "old", s.old, "\"shared\" or \"exclusive\"");
  return base::Ok();
}
Status Check(const StepRdmaMode&, CheckEnv&) { return base::Ok(); }

void Fields(JsonFields& f, StepRdmaMove& s) { f("device", s.device); }
std::string Describe(const StepRdmaMove& s) { return "move RDMA device " + s.device + " into the pod"; }
Status Apply(const StepRdmaMove& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  if (!env.host_rdma) return Error(Code::kRdmaUnavailable, "no RDMA netlink on the node");
  return MoveRdmaDevice(*env.host_rdma, s.device, pod->NetnsFd());
}
Status Undo(const StepRdmaMove& s, const UndoEnv&, StepEnv& env) {
  return ReturnRdmaDevice(s.device, env.host_rdma, env.pod_rdma, env.host.NetnsFd());
}
Status Validate(const StepRdmaMove& s, const StepSite& at) { return ValidDevice(s.device, at); }
// The state's RDMA device is checked as a whole (shared mode journals no step).
Status Check(const StepRdmaMove&, CheckEnv&) { return base::Ok(); }

void Fields(JsonFields& f, StepSoftRdma& s) { f("device", s.device); }
std::string Describe(const StepSoftRdma& s) { return "create Soft-RoCE device " + s.device; }
Status Apply(const StepSoftRdma& s, const AttachmentState& state, StepEnv& env) {
  if (!env.pod) return PodOf(env).error();
  if (!env.pod_rdma) return Error(Code::kRdmaUnavailable, "no RDMA netlink in the pod");
  return env.pod_rdma->AddSoftDevice(s.device, "rxe", state.pod_if_name);
}
Status Undo(const StepSoftRdma& s, const UndoEnv&, StepEnv& env) {
  return DeleteSoftDevice(s.device, env.host_rdma, env.pod_rdma);
}
Status Validate(const StepSoftRdma& s, const StepSite& at) { return ValidDevice(s.device, at); }
Status Check(const StepSoftRdma&, CheckEnv&) { return base::Ok(); }

}  // namespace cni

// The RDMA device's steps: the paired device moved into the pod (exclusive
// mode), or a Soft-RoCE device made on the pod's interface.
#include "cni/rdma_attach.h"
#include "cni/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

Status ValidDevice(const std::string& device, const StepAt& at) {
  if (!conf::IsValidDeviceId(device) || device.size() > 64)
    return BadValue(at.at + "device", device, "an RDMA device name (printable ASCII, no whitespace)");
  return base::Ok();
}

}  // namespace

// rdma-move: {"device"}
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
Status Validate(const StepRdmaMove& s, const StepAt& at) { return ValidDevice(s.device, at); }
// The state's RDMA device is checked as a whole (shared mode journals no step).
Status Check(const StepRdmaMove&, CheckEnv&) { return base::Ok(); }

// rdma-soft: {"device"}
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
Status Validate(const StepSoftRdma& s, const StepAt& at) { return ValidDevice(s.device, at); }
Status Check(const StepSoftRdma&, CheckEnv&) { return base::Ok(); }

}  // namespace cni

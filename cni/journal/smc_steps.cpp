#include "cni/core/smc_steps.h"

#include <algorithm>

#include "base/log.h"
#include "cni/core/context.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

void Fields(JsonFields& f, StepPnet& s) {
  f("pnetId", s.entry.pnet_id)("eth", s.entry.eth_name)("ib", s.entry.ib_name)("ibPort", s.entry.ib_port);
}
std::string Describe(const StepPnet& s) {
  return "SMC pnet " + s.entry.pnet_id + " " +
         (s.entry.eth_name.empty() ? s.entry.ib_name + " port " + std::to_string(s.entry.ib_port)
                                   : s.entry.eth_name);
}
Status Apply(const StepPnet& s, const AttachmentState&, StepEnv& env) {
  if (!env.pod_smc) return Error(Code::kSmcUnsupported, "no SMC netlink in the pod");
  return env.pod_smc->AddPnet(s.entry);
}
Status Undo(const StepPnet& s, const UndoEnv&, StepEnv& env) {
  return env.pod_smc ? IgnoreGone(env.pod_smc->DelPnet(s.entry.pnet_id)) : base::Ok();
}
Status Validate(const StepPnet& s, const StepSite& at) {
  if (s.entry.pnet_id.size() > 16 || !conf::IsValidDeviceId(s.entry.pnet_id))
    return BadValue(at.field_prefix + "pnetId", s.entry.pnet_id, "1..16 characters A-Z, 0-9");
  if (!s.entry.eth_name.empty()) RETURN_IF_ERROR(CheckIfName(at.field_prefix + "eth", s.entry.eth_name));
  if (!s.entry.ib_name.empty() && !conf::IsValidDeviceId(s.entry.ib_name))
    return BadValue(at.field_prefix + "ib", s.entry.ib_name, "an RDMA device name");
  return base::Ok();
}
Status Check(const StepPnet& s, CheckEnv& env) {
  if (s.entry.eth_name.empty()) return base::Ok();
  if (!env.pnet) {
    auto smc = env.ctx.netns.OpenSmc(env.ctx.env.netns);
    if (!smc.ok()) return Mismatch("SMC netlink is gone from the pod");
    ASSIGN_OR_RETURN(env.pnet, (*smc)->ListPnet());
  }
  if (std::any_of(env.pnet->begin(), env.pnet->end(), [&](const netlink::PnetEntry& e) {
        return e.pnet_id == s.entry.pnet_id && e.eth_name == s.entry.eth_name;
      }))
    return base::Ok();
  return Mismatch("SMC pnet entry " + s.entry.pnet_id + " for " + s.entry.eth_name +
                  " is missing in the pod");
}

void Fields(JsonFields& f, StepUeid& s) { f("ueid", s.ueid); }
std::string Describe(const StepUeid& s) { return "SMC UEID " + s.ueid; }
Status Apply(const StepUeid& s, const AttachmentState&, StepEnv& env) {
  netlink::Smc* smc = env.pod_smc ? env.pod_smc : env.host_smc;
  if (!smc) return Error(Code::kSmcUnsupported, "no SMC netlink");
  Status added = IgnoreExists(smc->AddUeid(s.ueid));
  if (!added.ok() && added.error().sys_errno == ERANGE)
    return Error(Code::kSmcUnsupported,
                 "smcr.ueid: the kernel's SMC User EID table is full (4 entries, node-wide); remove one "
                 "that is no longer used",
                 added.error().details, ERANGE);
  return added;
}
Status Undo(const StepUeid& s, const UndoEnv&, StepEnv& env) {
  netlink::Smc* smc = env.pod_smc ? env.pod_smc : env.host_smc;
  if (env.ueid_in_use && env.ueid_in_use(s.ueid)) {
    base::Log::Info("SMC UEID " + s.ueid + " stays: another attachment uses it");
    return base::Ok();
  }
  return smc ? IgnoreGone(smc->DelUeid(s.ueid)) : base::Ok();
}
Status Validate(const StepUeid& s, const StepSite& at) {
  if (s.ueid.empty() || s.ueid.size() > 32 || conf::HasControlChar(s.ueid))
    return BadValue(at.field_prefix + "ueid", s.ueid, "1..32 characters (the config's smcr.ueid rule)");
  return base::Ok();
}
Status Check(const StepUeid&, CheckEnv&) { return base::Ok(); }  // node-wide, shared: not the pod's to check

}  // namespace cni

#include "cni/core/sysctl_steps.h"

#include "cni/core/context.h"
#include "cni/state/state.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

// One value, one write(2): a refused write changed nothing (the journal owes it no undo). Read-only in the
// pod's netns is kSmcUnsupported naming the key to change.
Error SysctlRefused(const StepSysctl& step, Error e) {
  e.changed_nothing = true;
  if (e.sys_errno != EACCES && e.sys_errno != EROFS && e.sys_errno != EPERM) return e;
  const bool ipv6 = step.name == "net.ipv6.conf.all.disable_ipv6";
  const std::string why = step.name + " is read-only in the pod's netns (" + e.msg + "); ";
  return Error(Code::kSmcUnsupported,
               ipv6 ? "smcr.disableIPv6: " + why + "set smcr.disableIPv6 to false"
                    : "smcr.sysctls: " + why + "remove it from smcr.sysctls",
               e.details, e.sys_errno)
      .ChangedNothing();
}

}  // namespace

void Fields(JsonFields& f, StepSysctl& s) { f("name", s.name)("value", s.value)("old", s.old); }
std::string Describe(const StepSysctl& s) {
  return "sysctl " + s.name + "=" + s.value + " (was " + s.old + ")";
}
Status Apply(const StepSysctl& s, const AttachmentState&, StepEnv& env) {
  if (!env.pod_sysctl) return Error(Code::kInvalidEnv, "the pod's sysctls are not reachable");
  Status w = env.pod_sysctl->Write(s.name, s.value);
  return w.ok() ? w : Status(SysctlRefused(s, std::move(w).error()));
}
// A pod netns that is gone took its sysctls with it.
Status Undo(const StepSysctl& s, const UndoEnv&, StepEnv& env) {
  return env.pod_sysctl ? IgnoreGone(env.pod_sysctl->Write(s.name, s.old)) : base::Ok();
}
Status Validate(const StepSysctl& s, const StepSite& at) {
  if (!netlink::IsSafeSysctlName(s.name))
    return BadValue(at.field_prefix + "name", s.name,
                    "a sysctl name under net. (the config's smcr.sysctls rule)");
  for (const std::string* v : {&s.value, &s.old})
    if (v->size() > 4096 || v->find('\0') != std::string::npos)
      return BadValue(at.field_prefix + (v == &s.value ? "value" : "old"), *v,
                      "at most 4096 bytes without NUL");
  return base::Ok();
}
Status Check(const StepSysctl& s, CheckEnv& env) {
  if (!env.sysctl) {
    ASSIGN_OR_RETURN(env.sysctl, env.ctx.netns.OpenSysctl(env.ctx.env.netns));
  }
  ASSIGN_OR_RETURN(auto v, env.sysctl->Read(s.name));
  if (!v || *v != s.value)
    return Mismatch("sysctl " + s.name + " is " + (v ? *v : std::string("missing")) +
                    " in the pod, expected " + s.value);
  return base::Ok();
}

}  // namespace cni

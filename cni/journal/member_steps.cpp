#include "cni/core/member_steps.h"

#include <algorithm>

#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

// A group runs its members itself (AddChosen, DeleteGroup, CheckGroup): they are not the journal's to apply.
void Fields(JsonFields& f, StepMember& s) { f("podName", s.pod_name)("device", s.device)("why", s.why); }
std::string Describe(const StepMember& s) { return "member " + s.pod_name + " on " + s.device; }
Status Apply(const StepMember& s, const AttachmentState&, StepEnv&) {
  return Error(Code::kInternal, Describe(s) + ": a group's member is added by the group, not the journal");
}
Status Undo(const StepMember& s, const UndoEnv&, StepEnv&) {
  return Error(Code::kInternal, Describe(s) + ": a group's member is deleted by the group, not the journal");
}
Status Validate(const StepMember& s, const StepSite& at) {
  RETURN_IF_ERROR(CheckIfName(at.field_prefix + "podName", s.pod_name));
  if (!conf::IsValidDeviceId(s.device))
    return BadValue(at.field_prefix + "device", s.device, "a device ID or name");
  if (s.why.size() > 1024 || !conf::IsValidUtf8(s.why) ||
      std::any_of(s.why.begin(), s.why.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return BadValue(at.field_prefix + "why", s.why, "at most 1024 bytes of text without control characters");
  return base::Ok();
}
Status Check(const StepMember&, CheckEnv&) { return base::Ok(); }

}  // namespace cni

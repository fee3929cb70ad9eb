#include "cni/journal/journal.h"

#include <algorithm>

#include "base/fault.h"
#include "base/log.h"
#include "cni/state/device_info.h"

namespace cni {

using base::Error;
using base::Status;

Error JoinErrors(const std::vector<Error>& errors, const std::string& what) {
  Error e = errors.front();
  e.Context(what);
  for (size_t i = 1; i < errors.size(); ++i) {
    if (!e.details.empty()) e.details += "; ";
    e.details += errors[i].msg;
    if (!errors[i].details.empty()) e.details += " (" + errors[i].details + ")";
  }
  return e;
}

Status Journal::Persist() { return store_.Save(path_, state_); }

Status Journal::Run(const std::vector<Step>& steps, StepEnv& env) {
  if (steps.empty()) return base::Ok();
  state_.steps.insert(state_.steps.end(), steps.begin(), steps.end());
  RETURN_IF_ERROR(Persist());
  return RunWritten(steps.size(), env);
}

Status Journal::RunWritten(size_t count, StepEnv& env) {
  const size_t first = state_.steps.size() - std::min(count, state_.steps.size());
  for (size_t i = first; i < state_.steps.size(); ++i) {
    Step& step = state_.steps[i];
    // Planned before the pod-side index was known; the next state write records it.
    std::visit([&env](auto& s) { BindPodIndex(s, env.pod_index); }, step);
    base::Log::Info(DescribeStep(step));
    Status s = base::fault::Point("before", StepOp(step));
    if (s.ok()) s = ApplyStep(step, state_, env);
    if (s.ok()) s = base::fault::Point("after", StepOp(step));
    if (!s.ok()) {
      Error e = std::move(s).error().WithContext(DescribeStep(step));
      // The steps after it never ran. The failed one is owed an undo only if it may have changed something:
      // an undo of what never happened can only fail, and would keep the attachment from ever being deleted.
      state_.steps.erase(state_.steps.begin() + static_cast<std::ptrdiff_t>(e.changed_nothing ? i : i + 1),
                         state_.steps.end());
      return e;
    }
  }
  return base::Ok();
}

void Journal::DropLast() {
  if (!state_.steps.empty()) state_.steps.pop_back();
}

std::vector<Error> UndoSteps(const AttachmentState& state, StepEnv& env) {
  std::vector<Error> errors;
  if (Status s = RemoveDeviceInfo(state.device_info); !s.ok()) errors.push_back(std::move(s).error());
  const bool moved = FindStep<StepMove>(state.steps) || FindStep<StepChild>(state.steps);
  const StepMac* mac = FindStep<StepMac>(state.steps);
  UndoEnv u{state, mac ? mac->mac : std::string()};
  for (auto it = state.steps.rbegin(); it != state.steps.rend(); ++it) {
    const Step& step = *it;
    u.last = it == state.steps.rbegin();
    Status s = base::fault::Point("undo-before", StepOp(step));
    if (!s.ok()) {
      errors.push_back(std::move(s).error().WithContext("undo " + DescribeStep(step)));
      continue;
    }
    const bool covered = moved && OnLink(step);
    if (!covered) s = UndoStep(step, u, env);
    if (s.ok()) s = base::fault::Point("undo-after", StepOp(step));
    if (!s.ok()) {
      base::Log::Error("undo " + DescribeStep(step) + ": " + s.error().msg);
      errors.push_back(std::move(s).error().WithContext("undo " + DescribeStep(step)));
    } else if (!covered) {
      base::Log::Debug("undone: " + DescribeStep(step));
    }
  }
  return errors;
}

}  // namespace cni

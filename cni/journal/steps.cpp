// The dispatch over the Step variant.
#include "cni/core/steps.h"

#include <type_traits>
#include <utility>

#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

namespace {

template <size_t... I>
std::vector<std::string> OpsOf(std::index_sequence<I...>) {
  return {StepOp(Step(std::in_place_index<I>))...};
}

template <size_t I = 0>
Result<Step> StepOfOp(const std::string& op, const json& j) {
  if constexpr (I == std::variant_size_v<Step>) {
    return Error(Code::kState, "state: unknown step op \"" + op + "\"");
  } else {
    using T = std::variant_alternative_t<I, Step>;
    if (op != T::kOp) return StepOfOp<I + 1>(op, j);
    T s;
    JsonFields f(j);
    Fields(f, s);
    if (!f.status().ok()) return f.status().error();
    return Step(std::move(s));
  }
}

}  // namespace

const char* StepOp(const Step& step) {
  return std::visit([](const auto& s) { return std::decay_t<decltype(s)>::kOp; }, step);
}

std::vector<std::string> AllStepOps() { return OpsOf(std::make_index_sequence<std::variant_size_v<Step>>{}); }

std::string DescribeStep(const Step& step) {
  return std::visit([](const auto& s) { return Describe(s); }, step);
}

bool OnLink(const Step& step) {
  return std::visit(
      [](const auto& s) {
        return requires { std::decay_t<decltype(s)>::kOnLink; };
      },
      step);
}

void StepFields(JsonFields& f, const Step& step) {
  std::string op = StepOp(step);
  f("op", op);
  // Writing reads the step only.
  std::visit([&f](const auto& s) { Fields(f, const_cast<std::decay_t<decltype(s)>&>(s)); }, step);
}

json StepToJson(const Step& step) {
  json j = json::object();
  JsonFields f(j);
  StepFields(f, step);
  return j;
}

Result<Step> StepFromJson(const json& j) {
  std::string op;
  JsonFields f(j);
  f("op", op);
  RETURN_IF_ERROR(f.status());
  return StepOfOp(op, j);
}

Status ApplyStep(const Step& step, const AttachmentState& state, StepEnv& env) {
  return std::visit([&](const auto& s) { return Apply(s, state, env); }, step);
}

Status UndoStep(const Step& step, const UndoEnv& u, StepEnv& env) {
  return std::visit([&](const auto& s) { return Undo(s, u, env); }, step);
}

Status CheckStep(const Step& step, CheckEnv& env) {
  return std::visit([&](const auto& s) { return Check(s, env); }, step);
}

Status ValidateStep(const Step& step, const StepSite& at) {
  return std::visit([&](const auto& s) { return Validate(s, at); }, step);
}

}  // namespace cni

#include "cni/command/pod_request.h"

#include "cni/device/choice.h"
#include "conf/smcr_config.h"
#include "conf/version.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using nlohmann::json;
using By = conf::DeviceSelector::By;

namespace {

// The pool annotation's value in the pod's annotations: nullopt when absent.
Result<std::optional<bool>> PoolAnnotation(const conf::Config& cfg) {
  const auto annotations = cfg.runtime_config.find(conf::kPodAnnotationsCapability);
  if (annotations == cfg.runtime_config.end() || !annotations->is_object()) return std::optional<bool>();
  auto v = annotations->find(kPoolAnnotation);
  if (v == annotations->end() || v->is_null()) return std::optional<bool>();
  if (v->is_string()) {
    const auto& s = v->get_ref<const std::string&>();
    if (s == "true" || s == "True" || s == "TRUE") return std::optional<bool>(true);
    if (s == "false" || s == "False" || s == "FALSE") return std::optional<bool>(false);
  }
  return Error(Code::kInvalidConfig, std::string("runtimeConfig[\"") + conf::kPodAnnotationsCapability +
                                         "\"][\"" + kPoolAnnotation +
                                         "\"]: " + v->dump(-1, ' ', false, json::error_handler_t::replace) +
                                         " is not a boolean; the pod sets it to \"true\" or \"false\"");
}

}  // namespace

Result<PodRequest> WhatThePodAsked(const conf::Config& cfg, const Env& env, const conf::NodePolicy* node) {
  PodRequest r;
  const std::string pod = env.PodName().empty() ? "the pod" : "pod " + env.PodName();
  if (!cfg.mode->takes_device) {
    if (!cfg.smcr_wanted) {
      r.asked = false;
      r.why = pod + " did not ask for SMC-R (" + conf::kSmcrAnnotation + ")";
    }
    return r;
  }
  const bool may_pass = cfg.chained() && !cfg.device.required;
  if (cfg.device.by == By::kResource) {
    const auto ns = env.args.find("K8S_POD_NAMESPACE");
    const auto name = env.args.find("K8S_POD_NAME");
    if (ns == env.args.end() || name == env.args.end() || ns->second.empty() || name->second.empty())
      return Error(Code::kInvalidEnv,
                   cfg.device.Describe() +
                       ": CNI_ARGS lacks K8S_POD_NAMESPACE and K8S_POD_NAME, which name the pod to ask the "
                       "kubelet about; runtimes under Kubernetes pass them, elsewhere select the device by "
                       "name, mac, pci, rdma or pool");
    const std::string socket = node ? node->pod_resources_socket : std::string(kubelet::kDefaultSocket);
    auto answer =
        kubelet::PodDevices(socket, {ns->second, name->second, cfg.device.value}, kubelet::kTimeLimit);
    if (!answer.ok()) {
      if (answer.error().code == Code::kDeviceNotFound && may_pass) {
        r.asked = false;
        r.why = pod + " holds no device of " + cfg.device.value;
        return r;
      }
      Error e = std::move(answer).error();
      if (e.code == Code::kDeviceNotFound && cfg.chained())
        e.msg += " (device.required is true: a pod without one fails its ADD)";
      return e;
    }
    r.kubelet = std::move(answer).value();
    return r;
  }
  if (cfg.device.by == By::kPool && may_pass) {
    ASSIGN_OR_RETURN(std::optional<bool> opted, PoolAnnotation(cfg));
    if (!opted.value_or(false)) {
      r.asked = false;
      r.why = pod + (opted ? " set " : " did not set ") + kPoolAnnotation + (opted ? " to false" : "");
    }
  }
  return r;
}

json PassThroughResult(conf::Config&& cfg) {
  if (cfg.prev_result.is_null()) return json{{"cniVersion", cfg.cni_version}};
  return conf::ConvertResult(std::move(cfg.prev_result), cfg.cni_version);
}

}  // namespace cni

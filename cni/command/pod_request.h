// Whether the pod asked for an attachment at all. One that asked for nothing passes through (its prevResult
// returned unchanged) before anything of the node is opened.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/env.h"
#include "conf/config.h"
#include "conf/node.h"
#include "kubelet/pod_devices.h"

namespace cni {

/// The pod annotation a pod sets to "true" to take devices of a `device.pool` without `device.resource` from
/// a chained entry (it arrives through the runtime's `io.kubernetes.cri.pod-annotations` capability).
inline constexpr const char* kPoolAnnotation = "network.alibabacloud.com/erdma";

struct PodRequest {
  /// The pod asked for what this entry attaches.
  bool asked = true;
  /// Why not, for the log line: "pod default/web-0 holds no device of aliyun/erdma".
  std::string why;
  /// The kubelet's answer where it was asked (device.resource), for the device choice to reuse.
  std::optional<kubelet::PodAllocation> kubelet;
};

/// Whether the pod asked, for ADD and CHECK. Mode none: SMC-R wanted. A chained entry without
/// `device.required`: the kubelet gave the pod a device of `device.resource`, or for a `device.pool` without
/// one, kPoolAnnotation is "true". Anything else asked. Errors: the kubelet's, kInvalidEnv without the pod's
/// name, kInvalidConfig for an annotation that is not a boolean.
base::Result<PodRequest> WhatThePodAsked(const conf::Config& cfg, const Env& env,
                                         const conf::NodePolicy* node);

/// A pass-through's result: prevResult in the config's version (empty when standalone), moved out of `cfg`.
nlohmann::json PassThroughResult(conf::Config&& cfg);

}  // namespace cni

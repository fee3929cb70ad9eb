// Whether the pod asked for an attachment at all. Chained in a node's conflist, erdma-cni runs for every pod
// of the node; a pod that asked for nothing passes through (its prevResult returned unchanged) before
// anything of the node is opened: no state directory, no rtnetlink or RDMA socket.
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
  /// The kubelet's answer where it was asked (device.resource), for the
  /// device choice to reuse; device.pool asks it later, for the GPUs.
  std::optional<kubelet::PodAllocation> kubelet;
};

/// Decides, for ADD and CHECK, whether the pod asked. Mode none: SMC-R wanted. A chained entry (prevResult)
/// without `device.required`: for `device.resource`, the kubelet gave the pod a device of it; for a
/// `device.pool` without one, the pod annotation kPoolAnnotation is "true". Anything else asked: a standalone
/// config (a Multus NAD the pod named), a device the config or runtime names. Errors: the kubelet's (it
/// cannot tell whether the pod asked), kInvalidEnv without the pod's name, kInvalidConfig for an annotation
/// that is not a boolean.
base::Result<PodRequest> WhatThePodAsked(const conf::Config& cfg, const Env& env,
                                         const conf::NodePolicy* node);

/// The result of a pod that passes through: prevResult as it came, in the
/// config's version (an empty result when standalone). Takes prevResult out
/// of `cfg`: the last thing a pass-through does.
nlohmann::json PassThroughResult(conf::Config&& cfg);

}  // namespace cni

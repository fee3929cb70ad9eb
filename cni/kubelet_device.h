// device.resource: the device the kubelet's device plugin gave the pod, asked
// of the kubelet's pod-resources API at ADD. DEL and CHECK never ask: the
// state file records the device the ADD took.
#pragma once

#include <chrono>

#include "base/error.h"
#include "cni/env.h"
#include "conf/config.h"
#include "conf/node.h"

namespace cni {

/// How long the kubelet may take to answer, retry included.
inline constexpr std::chrono::milliseconds kKubeletTimeout{3000};

/// Turns cfg.device (By::kResource) into the device ID the kubelet reports
/// for this pod (K8S_POD_NAMESPACE, K8S_POD_NAME from CNI_ARGS) on the node
/// file's podResourcesSocket: the first of the pod's IDs of that resource.
/// Errors name the resource and the pod: kInvalidEnv without the pod's
/// name, kTryAgainLater when the kubelet is not there or does not know the
/// pod yet, kDeviceNotFound when the pod has no device of the resource.
base::Status DeviceFromKubelet(conf::Config& cfg, const Env& env, const conf::NodePolicy& node);

}  // namespace cni

// Putting a moved device back on the node, and deleting a child: the undo of StepMove and StepChild
// (cni/core/link_steps.h), which DEL without a journal and stale recovery use too.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/link_steps.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Puts the device back on the node exactly as `origin` says: found in the pod or on the node (also by
/// `pod_mac`, a StepMac's MAC), moved and renamed in one message, its MAC, MTU, addresses, admin state and
/// routes restored. kNameTaken when another link holds the node name; a warning when it is nowhere.
base::Status MoveHome(const DeviceOrigin& origin, const std::string& pod_name, StepEnv& env,
                      const std::string& pod_mac = "");

/// The device of `origin` on the node: under its node name, or handed back after the pod netns died (its
/// pod-side name or devN, its recorded index); nullopt when it is not on the node.
base::Result<std::optional<netlink::LinkInfo>> FindHome(const DeviceOrigin& origin,
                                                        const std::string& pod_name, netlink::Kernel& host,
                                                        const std::string& pod_mac = "");

/// Inverse of a StepChild: deletes the child if it is in the pod and ours (kind, MAC if asked); gone is done.
base::Status DeleteChild(const StepChild& child, StepEnv& env);

}  // namespace cni

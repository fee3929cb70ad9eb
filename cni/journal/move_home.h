// Putting a moved device back on the node, and deleting a child: the undo of StepMove and StepChild
// (cni/core/link_steps.h), which DEL without a journal and stale recovery use too.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/link_steps.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Puts the device back on the node exactly as `origin` says: finds it in the pod or already on the node
/// (FindHome), moves and renames it in one message, restores MAC, MTU, addresses, admin state and routes. It
/// is also recognised by `pod_mac`, the MAC a StepMac gave it ("" = none). kNameTaken when another link holds
/// the node name; success with a warning when the device is nowhere.
base::Status MoveHome(const DeviceOrigin& origin, const std::string& pod_name, StepEnv& env,
                      const std::string& pod_mac = "");

/// Where MoveHome would find the device of `origin` on the node without its pod: under its node name, or
/// handed back by the kernel after the pod netns died (its pod-side name or devN, its recorded index);
/// nullopt when it is not on the node.
base::Result<std::optional<netlink::LinkInfo>> FindHome(const DeviceOrigin& origin,
                                                        const std::string& pod_name, netlink::Kernel& host,
                                                        const std::string& pod_mac = "");

/// Inverse of a StepChild: deletes the child from the pod if it is there and
/// is ours (kind, and MAC when one was asked for). Gone counts as done.
base::Status DeleteChild(const StepChild& child, StepEnv& env);

}  // namespace cni

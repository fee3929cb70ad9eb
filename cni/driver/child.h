// Modes macvlan and ipvlan: a child of the node device is born in the pod.
#pragma once

#include "cni/driver/driver.h"

namespace cni {

const Driver& ChildDriver();

/// The macvlan/ipvlan child of `parent` that ADD creates in the pod as
/// `pod_name` (the child driver's arrival step).
StepChild ChildStep(const conf::Config& cfg, const std::optional<std::string>& mac,
                    const netlink::LinkInfo& parent, const std::string& pod_name);

}  // namespace cni

// Several devices in one attachment (device.count, device.pool): a group of member attachments, journaled in
// the group's own state file; ADD is all or nothing (docs/architecture.md, "Several devices: a group").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/state/state.h"
#include "kubelet/pod_devices.h"

namespace cni {

/// ADD for device.resource and device.pool: the device(s) ChooseDevices names.
/// One device of a resource is a plain attachment; a pool, or several, a group. `answer`: the kubelet's.
base::Result<nlohmann::json> AddChosen(Context& ctx,
                                       std::optional<kubelet::PodAllocation> answer = std::nullopt);

/// DEL of the group `st` at `path`: each member's DEL, last first, then the group's file; the file is kept,
/// listing the members left, when one could not be undone.
base::Status DeleteGroup(Context& ctx, const StateStore& store, const std::string& path,
                         const AttachmentState& st);

/// After a member's DEL outside its group's: removes the group's file once no member has a state left.
void ForgetGroupIfEmpty(const StateStore& store, const std::string& container_id,
                        const std::string& group_if);

/// CHECK of every member of the group `st`.
base::Status CheckGroup(Context& ctx, const AttachmentState& st);

}  // namespace cni

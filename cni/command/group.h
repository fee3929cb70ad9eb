// Several devices in one attachment (device.count, device.pool): a group. Each device is an attachment of its
// own (state file, claim, journal, interface, policy table), keyed by its pod-side name and marked as a
// member. The group's own state file (StateStore::GroupFileName) journals its members, one "member" step
// each, written before the member's ADD runs. ADD is all or nothing: a member that fails undoes itself, and
// the group undoes the earlier members, last first. One DEL or CHECK of the attachment does all.
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
/// One device of a resource is a plain attachment; a pool, or several devices, make a group.
/// `answer`: the kubelet's, where WhatThePodAsked already asked it.
base::Result<nlohmann::json> AddChosen(Context& ctx,
                                       std::optional<kubelet::PodAllocation> answer = std::nullopt);

/// DEL of the group whose state is `st` at `path`: each member's DEL, last first (members the group file lost
/// track of are found by their memberOf), then the group's file. Keeps the file, listing the members left,
/// when one could not be undone.
base::Status DeleteGroup(Context& ctx, const StateStore& store, const std::string& path,
                         const AttachmentState& st);

/// After a member's DEL outside its group's (a stale claim's recovery): the group's file goes once none of
/// its members has a state left, so that nothing is left behind for a runtime that never sends GC.
void ForgetGroupIfEmpty(const StateStore& store, const std::string& container_id,
                        const std::string& group_if);

/// CHECK of every member of the group `st`.
base::Status CheckGroup(Context& ctx, const AttachmentState& st);

}  // namespace cni

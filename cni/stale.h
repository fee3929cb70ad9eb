// Stale holders: attachments whose DEL the runtime lost (podman 4 never
// retries a failed DEL nor sends GC). The runtime removed the container and
// its netns; the state and the device's claim (or a child's share of its
// parent) stayed, and every later ADD of the device would fail with code 11
// naming a container that no longer exists. A holder is stale only when it
// is provably dead; then its DEL is finished from its journal, exactly as
// DEL would, under the claim lock the caller already holds.
#pragma once

#include <string>

#include "base/error.h"
#include "cni/claim.h"
#include "cni/commands.h"
#include "cni/state.h"

namespace cni {

/// Undoes one attachment from its journal and removes its state and claim
/// (a child: its share). `held`: the claim lock the caller holds (stale
/// recovery under an ADD's lock): used instead of locking that file again,
/// and cleared instead of removed. Shared by DEL, GC and stale recovery.
base::Status DeleteAttachment(Context& ctx, const StateStore& store, const std::string& path,
                              AttachmentState& st, const HeldClaim* held = nullptr);

/// Why the attachment `st` is provably dead, from evidence that what it
/// holds is free: its netns recorded at ADD is gone (NetnsOpener::MayExist:
/// no task, descriptor, socket, mount or path keeps that identity), and a
/// device it moved (move, vf) is back on the node (FindHome: its node name,
/// its pod-side name or devN). A child has no trace outside its netns (the
/// kernel deletes it with the netns); a VF without a netdev never left.
/// "" when it may be alive or the node cannot be read: never touched then.
std::string WhyStale(Context& ctx, const AttachmentState& st);

/// When `owner` (the holder of a claim or share in `data_dir`) is provably
/// dead: finishes its DEL under `held` (null: DeleteAttachment locks as DEL
/// does; GC), logs one line naming the old container, and returns true.
/// True as well when its state is gone already (the holder is gone). False,
/// touching nothing, when it may be alive or its state cannot be read. An
/// error (code 11, the state kept) when its DEL did not finish.
base::Result<bool> RecoverStale(Context& ctx, const std::string& data_dir, const ClaimOwner& owner,
                                const HeldClaim* held);

/// An ADD's device that is not on the node under the name it selects, and
/// whose claim `owner` names a holder: locks the claim and recovers a stale
/// holder (RecoverStale), so that the device, back on the node under
/// another name, can be found again. True when the claim no longer blocks.
base::Result<bool> RecoverClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner);

}  // namespace cni

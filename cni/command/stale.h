// Stale holders: attachments whose DEL the runtime lost (podman 4 never retries a failed DEL nor sends GC).
// The container and its netns are gone, but the state and the device's claim (or a child's share) stayed, and
// every later ADD of the device would fail with code 11. A holder is stale only when provably dead; then its
// DEL is finished from its journal, as DEL would, under the claim lock the caller already holds.
#pragma once

#include <string>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"

namespace cni {

/// When `owner` (the holder of a claim or share in `data_dir`) is provably dead: finishes its DEL under
/// `locked` (null: DeleteAttachment locks as DEL does; GC), logs one line naming the old container, and
/// returns true; also true when its state is gone already. False, touching nothing, when it may be alive or
/// its state cannot be read. Code 11, the state kept, when its DEL did not finish.
base::Result<bool> RecoverStale(Context& ctx, const std::string& data_dir, const ClaimOwner& owner,
                                const LockedClaim* locked);

/// For an ADD's device not on the node under the name it selects, whose claim
/// names `owner`: locks the claim and recovers a stale holder, so that the device,
/// back under another name, can be found again. True when the claim no longer blocks.
base::Result<bool> RecoverClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner);

}  // namespace cni

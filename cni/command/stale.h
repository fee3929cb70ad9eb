// Stale holders: attachments whose DEL the runtime lost, whose claim (or share) would fail every later ADD of
// the device with code 11. A provably dead one has its DEL finished (docs/architecture.md, "Stale claims").
#pragma once

#include <string>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"

namespace cni {

/// When `owner` (a claim's or share's holder in `data_dir`) is provably dead: finishes its DEL under `locked`
/// (null: DEL's own locking) and returns true; true too when its state is gone. False, touching nothing, when
/// it may be alive or its state cannot be read. Code 11, the state kept, when its DEL did not finish.
base::Result<bool> RecoverStale(Context& ctx, const std::string& data_dir, const ClaimOwner& owner,
                                const LockedClaim* locked);

/// For an ADD's device not on the node under its selected name, whose claim names `owner`: locks the claim
/// and recovers a stale holder. True when the claim no longer blocks.
base::Result<bool> RecoverClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner);

}  // namespace cni

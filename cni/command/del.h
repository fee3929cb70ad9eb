// DEL: idempotent and best effort, from the journal.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"

namespace cni {

/// DEL: idempotent, best effort, keeps the state when something could not be undone.
base::Status Del(Context& ctx);
/// The part of DEL that needs no kernel, for an attachment without a state file: the result when that settles
/// it; nullopt when a state or a claim naming one exists and Del must run.
std::optional<base::Status> DelWithoutState(const conf::Config& cfg, const Env& env, int lock_wait_ms);

/// Undoes one attachment from its journal and removes its state and claim (a child: its share).
/// `caller_lock`: a claim lock the caller holds, used instead of locking it again, and cleared, not removed.
base::Status DeleteAttachment(Context& ctx, const StateStore& store, const std::string& path,
                              AttachmentState& st, const LockedClaim* caller_lock = nullptr);

}  // namespace cni

// ADD: one pipeline for every mode (docs/architecture.md).
#pragma once

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cni/core/context.h"

namespace cni {

/// ADD: the result to print (in cfg.cni_version).
base::Result<nlohmann::json> Add(Context& ctx);

class StateStore;
/// kTryAgainLater when the attachment (CNI_CONTAINERID, CNI_IFNAME) already exists, as a state or a group's
/// (not looked for by a member); kState when its state cannot be read.
base::Status RefuseExisting(const Context& ctx, const StateStore& store);

}  // namespace cni

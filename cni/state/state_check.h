// A state read back from disk is input: validated before anything acts on it.
#pragma once

#include "base/error.h"
#include "cni/state/state.h"

namespace cni {

/// Checks a state read from disk as its sources were at ADD: kState naming a field ADD never writes.
base::Status ValidateState(const AttachmentState& s);

}  // namespace cni

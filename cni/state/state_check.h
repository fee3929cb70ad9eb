// A state read back from disk is input: validated before anything acts on it.
#pragma once

#include "base/error.h"
#include "cni/state/state.h"

namespace cni {

/// Checks a state read from disk as the config and the CNI environment are
/// checked (names, program names, netns path, MACs, table, PCI addresses,
/// sysctl names): kState naming the field when it is not what ADD can write.
base::Status ValidateState(const AttachmentState& s);

}  // namespace cni

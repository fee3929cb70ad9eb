// GC and STATUS (CNI 1.1.0).
#pragma once

#include "base/error.h"
#include "cni/core/context.h"

namespace cni {

/// GC (1.1.0): removes attachments not in cni.dev/valid-attachments.
base::Status Gc(Context& ctx);
/// STATUS (1.1.0): kNotAvailable when ADD could not work.
base::Status StatusCmd(Context& ctx);

}  // namespace cni

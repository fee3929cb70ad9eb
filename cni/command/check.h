// CHECK: the attachment against its state and the kernel.
#pragma once

#include "base/error.h"
#include "cni/core/context.h"

namespace cni {

base::Status Check(Context& ctx);

}  // namespace cni

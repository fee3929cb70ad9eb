// Mode none: nothing enters the pod; SMC-R on the primary's interface, prevResult passed through.
#pragma once

#include "cni/driver/driver.h"
#include "conf/modes.h"

namespace cni {

/// Its row (cni/driver/registry.cpp).
extern const conf::ModeSpec kNoneMode;

}  // namespace cni

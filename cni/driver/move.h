// Mode move: the node device itself enters the pod, and goes home on DEL exactly as it was.
#pragma once

#include "cni/driver/driver.h"
#include "conf/modes.h"

namespace cni {

/// Its row (cni/driver/registry.cpp).
extern const conf::ModeSpec kMoveMode;

}  // namespace cni

// Mode move: the node device itself enters the pod.
#pragma once

#include "cni/driver/driver.h"

namespace cni {

const Driver& MoveDriver();

}  // namespace cni

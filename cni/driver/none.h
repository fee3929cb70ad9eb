// Mode none: nothing enters the pod; SMC-R on the primary's interface.
#pragma once

#include "cni/driver/driver.h"

namespace cni {

const Driver& NoneDriver();

}  // namespace cni

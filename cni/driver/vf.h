// Mode vf: an SR-IOV VF, set up through its PF, enters the pod.
#pragma once

#include "cni/driver/driver.h"

namespace cni {

const Driver& VfDriver();

}  // namespace cni

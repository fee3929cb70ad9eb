// Mode vf: an SR-IOV VF, set up through its PF, enters the pod (one bound to vfio-pci: nothing enters).
#pragma once

#include "cni/driver/driver.h"
#include "conf/modes.h"

namespace cni {

/// Its row (cni/driver/registry.cpp).
extern const conf::ModeSpec kVfMode;

}  // namespace cni

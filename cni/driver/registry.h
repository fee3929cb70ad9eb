// Which driver serves each mode of conf::Modes(): the one table of them.
// A test fails when a mode of conf::Modes() has no driver.
#pragma once

#include "cni/driver/driver.h"
#include "conf/modes.h"

namespace cni {

/// The driver of `mode`; null when none is registered for it.
const Driver* FindDriver(conf::Mode mode);
/// FindDriver's, for a mode that has one (every mode of conf::Modes()).
const Driver& DriverFor(conf::Mode mode);

}  // namespace cni

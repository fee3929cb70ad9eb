// The modes of the plugin, one conf::ModeSpec row each: the one table a config is parsed with. A new mode is
// its driver file(s), its row here and its row in docs/modes.md (test/unit/mode_registry_test.cpp).
#pragma once

#include "conf/modes.h"

namespace cni {

/// Every mode, the default ("move") first, in the order messages list them.
conf::ModeTable Modes();

}  // namespace cni

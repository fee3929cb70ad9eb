// The modes of the plugin: one row each (conf::ModeSpec: its name, what the parser must know, its options'
// parser, its driver), the one table a config is parsed with; a config's driver is its row's
// (cfg.mode->driver()). A new mode is its driver file(s), its row here and its row in docs/modes.md
// (test/unit/mode_registry_test.cpp).
#pragma once

#include "conf/modes.h"

namespace cni {

/// Every mode, the default ("move") first, in the order messages list them.
conf::ModeTable Modes();

}  // namespace cni

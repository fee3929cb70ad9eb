// install, uninstall and check: the plugin binary in the CNI bin dir and erdma-cni's entry in the conflist.
#pragma once

#include <iosfwd>

#include "install/options.h"

namespace install {

/// Exit statuses.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  ///< failed (nothing changed), or check: not as asked
inline constexpr int kExitUsage = 2;

/// Runs `o.command`. What was done goes to `out`; errors and warnings to `err`, each naming the file and the
/// fix. Order on install: the binary first, then the conflist, so a runtime never runs a chain whose binary
/// is missing; uninstall does the reverse.
int Run(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace install

// install, uninstall and check: the plugin binary in the CNI bin dir and erdma-cni's entry in the conflist.
#pragma once

#include <iosfwd>

#include "install/options.h"

namespace install {

/// Exit statuses.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  ///< failed (nothing changed), or check: not as asked
inline constexpr int kExitUsage = 2;

/// Runs `o.command`: what was done to `out`, errors and warnings (naming the file and the fix) to `err`.
/// Install writes the binary before the conflist, so no runtime runs a chain without it; uninstall reverses.
int Run(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace install

// `erdma-cni diag` from its command line.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cni {

/// `erdma-cni diag [--netns PATH | --container ID] [--data-dir DIR] [--json]`: prints the report of the real
/// sources. Exit 0 when no problem was found, 1 when one was, 2 on bad arguments (naming the one).
int RunDiag(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cni

// `erdma-cni --help`: what an admin reads when running the binary by hand.
#pragma once

#include <string>

namespace cni {

/// What erdma-cni is, its version and `build`, CNI versions, admin commands and where its docs are.
std::string HelpText(const std::string& build);

}  // namespace cni

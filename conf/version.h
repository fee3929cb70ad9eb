// CNI spec versions erdma-cni speaks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conf {

/// Every version we accept, oldest first: 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0.
const std::vector<std::string>& SupportedVersions();
bool IsSupportedVersion(std::string_view v);
/// Orders "a.b.c" numerically; returns <0, 0, >0. Unparsable text sorts first.
int CompareVersions(std::string_view a, std::string_view b);
/// The highest version in `offered` that we support (1.1.0's cniVersions list).
std::optional<std::string> PickVersion(const std::vector<std::string>& offered);

}  // namespace conf

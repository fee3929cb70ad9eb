// CNI spec versions erdma-cni speaks.
#pragma once

#include <nlohmann/json.hpp>
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

/// Rewrites a CNI result of any supported version as `version`: adds
/// ips[].version ("4"/"6") before 1.0.0, removes it from 1.0.0 on, drops
/// 1.1.0-only route and interface fields before 1.1.0, sets cniVersion.
/// Unknown keys are kept.
nlohmann::json ConvertResult(nlohmann::json result, const std::string& version);

}  // namespace conf

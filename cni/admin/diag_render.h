// `erdma-cni diag`'s report as people read it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cni {

/// The same for people: one section per topic, problems marked "!!".
std::string RenderDiag(const nlohmann::json& report);

}  // namespace cni

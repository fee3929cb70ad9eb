#include "ipam/negotiate.h"

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "conf/version.h"

namespace ipam {

nlohmann::json DelegateConfig(const conf::Config& cfg) {
  nlohmann::json c = cfg.raw;
  c.erase("prevResult");
  c["cniVersion"] = cfg.cni_version;
  return c;
}

using nlohmann::json;

base::Result<json> NegotiatingExecutor::Run(const std::string& type, const std::string& command,
                                            const std::string& config) {
  auto first = inner_.Run(type, command, config);
  // A plugin that timed out or never started has no version problem; asking again would double the wait.
  if (first.ok() || command == "VERSION" || first.error().sys_errno == ETIMEDOUT ||
      first.error().changed_nothing)
    return first;
  json cfg = json::parse(config, nullptr, false);
  if (!cfg.is_object() || !cfg.contains("cniVersion") || !cfg["cniVersion"].is_string()) return first;
  const std::string wanted = cfg["cniVersion"].get<std::string>();

  auto answer = inner_.Run(type, "VERSION", json{{"cniVersion", wanted}}.dump());
  if (!answer.ok() || !answer->is_object() || !answer->contains("supportedVersions") ||
      !(*answer)["supportedVersions"].is_array())
    return first;
  std::vector<std::string> theirs;
  for (const auto& v : (*answer)["supportedVersions"])
    if (v.is_string()) theirs.push_back(v.get<std::string>());
  if (std::find(theirs.begin(), theirs.end(), wanted) != theirs.end()) return first;  // a real failure

  std::vector<std::string> older;
  for (const auto& v : theirs)
    if (conf::CompareVersions(v, wanted) < 0) older.push_back(v);
  auto pick = conf::PickVersion(older);
  if (!pick) return first;
  base::Log::Info("ipam " + type + " does not speak cniVersion " + wanted + "; running " + command + " at " +
                  *pick);
  cfg["cniVersion"] = *pick;
  if (cfg.contains("prevResult") && cfg["prevResult"].is_object())
    cfg["prevResult"] = conf::ConvertResult(cfg["prevResult"], *pick);
  return inner_.Run(type, command, cfg.dump());
}

}  // namespace ipam

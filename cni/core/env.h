// The CNI_* environment of one invocation.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace cni {

enum class Command { kAdd, kDel, kCheck, kVersion, kGc, kStatus };
/// The command as CNI_COMMAND names it ("ADD", ...).
const char* CommandName(Command c);

struct Env {
  Command command = Command::kVersion;
  std::string container_id;                 ///< CNI_CONTAINERID
  std::string netns;                        ///< CNI_NETNS (may be empty for DEL)
  std::string ifname;                       ///< CNI_IFNAME
  std::vector<std::string> path;            ///< CNI_PATH split on ':'
  std::map<std::string, std::string> args;  ///< CNI_ARGS K=V pairs

  /// "K8S_POD_NAMESPACE/K8S_POD_NAME" when both are in CNI_ARGS, else "".
  std::string PodName() const;
};

using Getenv = std::function<const char*(const char*)>;

/// Reads CNI_COMMAND and the variables it requires; kInvalidEnv naming the variable and what it must hold.
base::Result<Env> ParseEnv(const Getenv& getenv);

/// Parses CNI_ARGS: "K=V;K2=V2" (shape only; ParseEnv refuses unknown keys for ADD).
base::Result<std::map<std::string, std::string>> ParseCniArgs(std::string_view text);

}  // namespace cni

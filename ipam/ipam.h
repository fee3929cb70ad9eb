// Delegation to an IPAM plugin (host-local, static, whereabouts, ...), run as
// the spec says: found on CNI_PATH, same environment with CNI_COMMAND set,
// the network config on stdin.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "netlink/ip.h"

namespace ipam {

/// An address for our interface, from IPAM or inherited from the device.
struct IpConfig {
  netlink::IpPrefix address;
  std::optional<netlink::IpAddress> gateway;
  bool operator==(const IpConfig&) const = default;
};

/// Runs one IPAM command. The fake in tests records calls.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs plugin `type` with CNI_COMMAND=`command` and `config` on stdin.
  /// Returns the parsed stdout (null when empty). A CNI error from the plugin
  /// becomes Code::kIpam (11 passes through) with the plugin's message.
  virtual base::Result<nlohmann::json> Run(const std::string& type, const std::string& command,
                                           const std::string& config) = 0;
};

/// Executor that fork/execs the plugin from `cni_path` with this process's
/// environment (CNI_COMMAND replaced).
class ExecExecutor : public Executor {
 public:
  explicit ExecExecutor(std::vector<std::string> cni_path) : cni_path_(std::move(cni_path)) {}
  base::Result<nlohmann::json> Run(const std::string& type, const std::string& command,
                                   const std::string& config) override;

 private:
  std::vector<std::string> cni_path_;
};

/// What a plugin's run means: its stdout `out` (what was read of it) and its
/// wait status. Exit 0: the JSON value printed (null when nothing); else the
/// plugin's CNI error (code 11 passes through) or what became of it.
base::Result<nlohmann::json> ReadOutput(const std::string& type, const std::string& command,
                                        const std::string& out, int status);

}  // namespace ipam

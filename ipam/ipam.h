// Delegation to an IPAM plugin (host-local, static, whereabouts, ...), run as the spec says: found on
// CNI_PATH, same environment with CNI_COMMAND set, the network config on stdin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "conf/config.h"
#include "netlink/ip.h"

namespace ipam {

/// An address for our interface, from IPAM or inherited from the device.
struct IpConfig {
  netlink::IpPrefix address;
  std::optional<netlink::IpAddress> gateway;
  bool operator==(const IpConfig&) const = default;
};

/// The attachment an IPAM plugin runs for (its CNI_CONTAINERID, CNI_IFNAME and CNI_NETNS).
struct Attachment {
  std::string container_id, ifname, netns;
  /// It is the invoking pod's own (a member of its group): CNI_ARGS, the pod's, are kept.
  bool own_pod = false;
};

/// Runs one IPAM command. The fake in tests records calls.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Until reset (nullopt), runs plugins for `who` instead of this process's CNI_* attachment, without the
  /// caller pod's CNI_ARGS unless `who` is that pod's own (stale-claim recovery, a group's members).
  virtual void RunFor(const std::optional<Attachment>& who) { (void)who; }
  /// Runs plugin `type` with CNI_COMMAND=`command` and `config` on stdin: its parsed stdout (null when
  /// empty). Its CNI error is Code::kIpam (11 passes through) with its message; a plugin that could not be
  /// started fails with Error::changed_nothing set.
  virtual base::Result<nlohmann::json> Run(const std::string& type, const std::string& command,
                                           const std::string& config) = 0;
  /// How long one Run may take, in milliseconds (`ipamTimeoutMs`).
  virtual void SetTimeLimit(uint32_t ms) { (void)ms; }
};

/// The most a plugin may print; more is refused (code 104), not truncated.
inline constexpr size_t kMaxOutputBytes = 1 << 20;

/// Under ERDMA_CNI_PHASES (base/phase.h): the phase the IPAM plugin's own CPU (its rusage from wait4) is
/// charged to, and the one our side of running it counts to.
inline constexpr const char* kPluginPhase = "ipam-plugin";
inline constexpr const char* kExecPhase = "ipam-exec";

/// Executor that spawns the plugin from `cni_path` with this process's environment (CNI_COMMAND replaced) in
/// a process group of its own, killed whole past the time limit (code 104, ETIMEDOUT) and once the plugin has
/// exited: a child that keeps its stdout open does not hold us (or the device's lock) up.
class ExecExecutor : public Executor {
 public:
  explicit ExecExecutor(std::vector<std::string> cni_path) : cni_path_(std::move(cni_path)) {}
  base::Result<nlohmann::json> Run(const std::string& type, const std::string& command,
                                   const std::string& config) override;
  void SetTimeLimit(uint32_t ms) override { time_limit_ms_ = ms; }
  void RunFor(const std::optional<Attachment>& who) override { for_ = who; }

 private:
  std::vector<std::string> cni_path_;
  std::optional<Attachment> for_;
  uint32_t time_limit_ms_ = conf::kDefaultIpamTimeoutMs;
};

/// What a run with stdout `out` and wait `status` means. Exit 0: the JSON value printed (null when nothing);
/// else the plugin's CNI error (code 11 passes through) or what became of it.
base::Result<nlohmann::json> ReadOutput(const std::string& type, const std::string& command,
                                        const std::string& out, int status);

}  // namespace ipam

// The node's own settings: what only the node admin may decide, because it reaches outside one attachment
// (docs/security.md). Its path is kNodeConfigPath or ERDMA_CNI_NODE_CONFIG in the runtime's environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "conf/config.h"

namespace conf {

inline constexpr const char* kNodeConfigPath = "/etc/erdma-cni/node.json";
inline constexpr const char* kNodeConfigEnv = "ERDMA_CNI_NODE_CONFIG";
inline constexpr const char* kAttachmentsDir = "/run/erdma-cni-attachments";
/// Largest node file read.
inline constexpr size_t kMaxNodeConfigBytes = 64 << 10;

/// What configs may name. A path entry is exact, or, ending in "/", allows
/// anything below that directory (not the directory itself).
struct NodePolicy {
  /// `dataDir` values a config may use (keys "dataDirs").
  std::vector<std::string> data_dirs = {"/run/erdma-cni"};
  /// `logFile` values a config may use (key "logFiles").
  std::vector<std::string> log_files = {"/var/log/erdma-cni.log", "/var/log/erdma-cni/"};
  /// Node devices that move or vf mode may take although they are `lo` or
  /// carry one of the node's default routes (key "allowNodeDevices").
  std::vector<std::string> allow_node_devices;
  /// The kubelet's pod-resources socket, for device.resource (key "podResourcesSocket"): the node admin's, as
  /// a config could point root at any socket.
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  /// Where ADD records, per attachment, the dataDir and network of its state (key "attachmentsDir"): how DEL
  /// finds the state whatever the config says by then (cni/state/record.h). Outside every dataDir, since any
  /// name there may be a network's.
  std::string attachments_dir = kAttachmentsDir;
  /// RLIMIT_MEMLOCK the NRI agent gives the containers of attached pods (key "nriMemlock": bytes with an
  /// optional Ki, Mi or Gi suffix, or "unlimited"); none: the runtime's limit is left (docs/nri.md).
  std::optional<uint64_t> nri_memlock;
  /// Where the policy came from, for messages: the file, or the defaults.
  std::string source = std::string("built-in defaults (") + kNodeConfigPath + " absent)";
};

/// Parses the node file's text. kDecoding (not JSON, too deep, NUL), or
/// kInvalidConfig naming `path` and the key: an unknown key, a value of the
/// wrong type, a path entry that is not absolute or has "." or ".." parts.
base::Result<NodePolicy> ParseNodePolicy(std::string_view text, const std::string& path);

/// The node policy from `env_path` (ERDMA_CNI_NODE_CONFIG; null or empty: kNodeConfigPath). The file must be
/// a regular file reached without a symlink, owned by root, not writable by group or others, at most
/// kMaxNodeConfigBytes (kIo otherwise). A missing kNodeConfigPath gives the built-in defaults; a missing file
/// named by the variable is kIo.
base::Result<NodePolicy> LoadNodePolicy(const char* env_path);

/// A locked-memory limit as the node file and the pod annotation write it: decimal bytes with an optional
/// Ki, Mi or Gi suffix, or "unlimited" (UINT64_MAX, RLIM_INFINITY); nullopt for anything else.
std::optional<uint64_t> ParseMemlock(std::string_view value);

/// Whether `path` is allowed by `entries` (see NodePolicy).
bool PathAllowed(const std::vector<std::string>& entries, std::string_view path);

/// kInvalidConfig when the config's dataDir or logFile is not allowed by `policy`; the message names the key,
/// the value, the node file and the key the admin would add the value to.
base::Status CheckNodePaths(const Config& cfg, const NodePolicy& policy);

}  // namespace conf

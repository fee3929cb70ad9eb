// Where the admin commands (diag, clear) look for erdma-cni's attachments.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace cni {

struct AdminDataDirs {
  std::vector<std::string> dirs;  ///< searched, in the node file's order
  /// Node file entries ending in "/": any directory below them may be a dataDir, too many to walk; named in
  /// the report so that the admin gives --data-dir.
  std::vector<std::string> unsearched;
  std::string attachments_dir;       ///< the node file's attachmentsDir
  std::string pod_resources_socket;  ///< the node file's podResourcesSocket
  std::string node_source;           ///< where the node policy came from
};

/// `given` (--data-dir) alone; without it every dataDir the node file ($ERDMA_CNI_NODE_CONFIG, else
/// /etc/erdma-cni/node.json; without one, /run/erdma-cni) allows by its exact path, and, for a
/// `container_id`, every dataDir its attachments' records name that the node file allows (those below an
/// entry ending in "/" included). Errors: the node file's.
base::Result<AdminDataDirs> FindAdminDataDirs(const std::string& given, const std::string& container_id = "");

}  // namespace cni

// Where the admin commands (diag, clear) look for erdma-cni's attachments.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace cni {

struct AdminDataDirs {
  std::vector<std::string> dirs;  ///< searched, in the node file's order
  /// Node file entries ending in "/", too many to walk: named so that the admin gives --data-dir.
  std::vector<std::string> unsearched;
  std::string attachments_dir;       ///< the node file's attachmentsDir
  std::string pod_resources_socket;  ///< the node file's podResourcesSocket
  std::string node_source;           ///< where the node policy came from
};

/// `given` (--data-dir) alone; without it every dataDir the node file allows by its exact path, and those
/// the records of `container_id`'s attachments name that it allows. Errors: the node file's.
base::Result<AdminDataDirs> FindAdminDataDirs(const std::string& given, const std::string& container_id = "");

}  // namespace cni

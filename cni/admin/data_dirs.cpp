#include "cni/admin/data_dirs.h"

#include <cstdlib>

#include "conf/node.h"

namespace cni {

base::Result<AdminDataDirs> FindAdminDataDirs(const std::string& given) {
  AdminDataDirs out;
  if (!given.empty()) {
    out.dirs.push_back(given);
    out.source = "--data-dir";
    return out;
  }
  ASSIGN_OR_RETURN(conf::NodePolicy policy, conf::LoadNodePolicy(std::getenv(conf::kNodeConfigEnv)));
  out.source = policy.source;
  for (const std::string& d : policy.data_dirs) (d.ends_with('/') ? out.unsearched : out.dirs).push_back(d);
  return out;
}

}  // namespace cni

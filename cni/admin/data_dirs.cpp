#include "cni/admin/data_dirs.h"

#include <algorithm>
#include <cstdlib>

#include "cni/state/record.h"
#include "conf/node.h"

namespace cni {

base::Result<AdminDataDirs> FindAdminDataDirs(const std::string& given, const std::string& container_id) {
  AdminDataDirs out;
  if (!given.empty()) {
    out.dirs.push_back(given);
    out.source = "--data-dir";
    return out;
  }
  ASSIGN_OR_RETURN(conf::NodePolicy policy, conf::LoadNodePolicy(std::getenv(conf::kNodeConfigEnv)));
  out.source = policy.source;
  out.attachments_dir = policy.attachments_dir;
  for (const std::string& d : policy.data_dirs) (d.ends_with('/') ? out.unsearched : out.dirs).push_back(d);
  if (container_id.empty()) return out;
  for (const FoundRecord& r : RecordsOf(policy.attachments_dir, container_id))
    if (conf::PathAllowed(policy.data_dirs, r.place.data_dir) &&
        std::find(out.dirs.begin(), out.dirs.end(), r.place.data_dir) == out.dirs.end())
      out.dirs.push_back(r.place.data_dir);
  return out;
}

}  // namespace cni

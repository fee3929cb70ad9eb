#include "cni/admin/data_dirs.h"

#include <algorithm>
#include <cstdlib>

#include "cni/state/record.h"
#include "conf/node.h"

namespace cni {

base::Result<AdminDataDirs> FindAdminDataDirs(const std::string& given, const std::string& container_id) {
  AdminDataDirs out;
  auto loaded = conf::LoadNodePolicy(std::getenv(conf::kNodeConfigEnv));
  if (loaded.ok()) {
    out.pod_resources_socket = loaded->pod_resources_socket;
    out.node_source = loaded->source;
  }
  if (!given.empty()) {  // an admin's own dataDir: a broken node file does not stand in the way
    out.dirs.push_back(given);
    return out;
  }
  if (!loaded.ok()) return std::move(loaded).error();
  const conf::NodePolicy& policy = *loaded;
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

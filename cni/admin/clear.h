// `erdma-cni clear`: an admin clears an attachment that no DEL will finish (its IPAM plugin's DEL always
// fails, its runtime is gone) and the claims and shares a container that never ran left behind, which block
// the device for every other pod (code 11). Each attachment goes through the DEL of its own journal
// (DeleteAttachment), as stale recovery does.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cni {

struct ClearOptions {
  std::string container_id;                              ///< required: CNI_CONTAINERID of the attachment
  std::string network;                                   ///< "" = any network
  std::string if_name;                                   ///< "" = any interface (CNI_IFNAME, or a group's)
  std::string data_dir;                                  ///< "" = every dataDir of the node file
  std::vector<std::string> cni_path = {"/opt/cni/bin"};  ///< where the IPAM plugins are
  bool skip_ipam = false;  ///< an IPAM DEL that fails is reported, not a reason to keep the attachment
  bool force = false;      ///< clear although the pod netns still has tasks
  bool dry_run = false;    ///< show what would be cleared, change nothing
};

/// `erdma-cni clear --container ID [--network NAME] [--if IFNAME] [--data-dir DIR] [--cni-path DIRS]
/// [--skip-ipam] [--force] [--dry-run]`: prints each attachment, claim and share of the container it finds,
/// what it did and what it could not put back. Exit 0 when everything found was cleared, 1 when nothing was
/// found or something was refused or kept, 2 on bad arguments.
int RunClear(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cni

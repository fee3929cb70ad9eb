// `erdma-cni clear`: an admin clears an attachment no DEL will finish, and the claims and shares a container
// that never ran left behind; each attachment goes through the DEL of its own journal (DeleteAttachment).
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

/// `erdma-cni clear --container ID [options]`: prints what it finds, did and could not put back. Exit 0 when
/// all found was cleared, 1 when nothing was found or something was kept, 2 on bad arguments.
int RunClear(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cni

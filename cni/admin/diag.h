// `erdma-cni diag`: an operator's checks when a pod has no working RDMA; read-only (docs/troubleshooting.md).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/smc_kernel.h"
#include "netlink/sysctl.h"

namespace cni {

struct DiagOptions {
  std::string netns;  ///< the netns to look at ("" = the node's)
  /// erdma-cni's dataDirs: their states are checked against the kernel
  std::vector<std::string> data_dirs;
  /// Node file entries diag could not walk (AdminDataDirs::unsearched)
  std::vector<std::string> unsearched;
  /// The node's CNI config directory, its erdma-cni entries judged as the installer does ("": not looked at)
  std::string cni_conf_dir = "/etc/cni/net.d";
  /// The node file's pod-resources socket and where it came from
  std::string pod_resources_socket;
  std::string node_source;
  /// The runtime's NRI socket (docs/nri.md): whether the runtime offers NRI, for the agent
  std::string nri_socket = "/var/run/nri/nri.sock";
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  bool json = false;
};

/// What diag reads through, opened for DiagOptions::netns (null: unavailable, with the reason in *_error).
struct DiagSources {
  std::unique_ptr<netlink::Kernel> links;
  std::unique_ptr<netlink::Rdma> rdma;  ///< in the netns looked at
  std::string rdma_error;
  std::unique_ptr<netlink::Sysctl> sysctl;
  std::unique_ptr<netlink::Smc> smc;
  std::string smc_error;
  uint64_t netns_inode = 0;  ///< to find the processes in it (0: unknown)
};

/// Everything diag found, as one JSON object (the --json output).
nlohmann::json Diagnose(const DiagOptions& opts, DiagSources& src);

}  // namespace cni

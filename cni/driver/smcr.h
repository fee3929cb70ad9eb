// SMC-R in the pod: sysctls, the pnet table and the SMC-Rv2 User EID, read, planned (pure), then journaled.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "netlink/rdma_pairing.h"
#include "netlink/smc_kernel.h"
#include "netlink/sysctl.h"

namespace cni {

/// Where SMC-R goes.
struct SmcrTarget {
  std::string ifname;    ///< the pod interface
  std::string pnet_mac;  ///< the eRDMA netdev's MAC, for pnetId "auto"
  /// Move mode: the RDMA device's own netdev, which the kernel pairs without PNET IDs: no "auto" entry.
  bool is_rdma_netdev = false;
  /// Mode none: warn when no RDMA port in the node's pnet table has the ID.
  bool node_port_check = false;
};

/// What the SMC-R plan depends on, read in the pod (and for node_port_check on the node) before any change.
struct SmcrFacts {
  std::map<std::string, std::optional<std::string>>
      sysctls;                           ///< each one's value; nullopt: not in this kernel
  std::optional<std::string> smc_error;  ///< why the pod has no SMC netlink, when it has none
  std::vector<netlink::PnetEntry> pnet;  ///< the pod's pnet table (when an entry is wanted)
  std::optional<std::vector<netlink::PnetEntry>> node_pnet;  ///< the node's, when checked and readable
  bool has_ueid = false;                                     ///< the kernel has the SMC-Rv2 User EID commands
  std::vector<std::string> ueids;                            ///< the node-wide UEID table
  bool ueid_elsewhere = false;  ///< the configured UEID is in use by another attachment
};

/// Reads the SMC-R facts for `target`: the configured sysctls, and through `smc` (null: the pod has no SMC
/// netlink, `smc_error` saying why) the pnet and UEID tables; `node_smc` for target.node_port_check.
base::Result<SmcrFacts> ReadSmcr(const conf::Config& cfg, const SmcrTarget& target, netlink::Sysctl& sysctl,
                                 netlink::Smc* smc, const base::Error* smc_error, netlink::Smc* node_smc,
                                 const std::function<bool(const std::string&)>& ueid_in_use);

/// Plans (pure) the SMC-R steps for the target interface: a step for each configured sysctl (and
/// disable_ipv6) whose value differs, a pnet entry (see SmcrTarget), the UEID when configured and absent or
/// shared with other attachments. What the kernel lacks is kSmcUnsupported, naming the piece and the kernel
/// requirement, or with onUnsupported "warn" a log line and no step.
base::Result<std::vector<Step>> PlanSmcr(const conf::Config& cfg, const SmcrTarget& target,
                                         const SmcrFacts& facts);

}  // namespace cni

// SMC-R in the pod: sysctls, the SMC pnet table and the SMC-Rv2 User EID,
// planned before anything changes and applied as journal steps.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state.h"
#include "conf/config.h"
#include "netlink/rdma_pairing.h"
#include "netlink/smc.h"
#include "netlink/sysctl.h"

namespace cni {

/// Where SMC-R goes.
struct SmcrTarget {
  std::string ifname;    ///< the pod interface
  std::string pnet_mac;  ///< the eRDMA netdev's MAC, for pnetId "auto"
  /// Move mode: the interface is the RDMA device's own netdev, which the
  /// kernel pairs without PNET IDs, so an "auto" pnet entry is left out.
  bool is_rdma_netdev = false;
  /// The node's SMC netlink (mode none): warns when no RDMA port has the ID.
  netlink::Smc* node_smc = nullptr;
};

/// Plans the SMC-R steps for the target interface in the pod: a sysctl step
/// for each configured sysctl (and disable_ipv6) whose value differs, a pnet
/// entry for the interface (see SmcrTarget), the UEID when configured and
/// absent or shared with other attachments (`ueid_in_use`). What the kernel
/// lacks is an error (kSmcUnsupported, naming the piece and the kernel
/// requirement) or, with onUnsupported "warn", a log line and no step.
base::Result<std::vector<Step>> PlanSmcr(const conf::Config& cfg, const SmcrTarget& target,
                                         netlink::Sysctl& sysctl, netlink::Smc* smc,
                                         const base::Error* smc_error,
                                         const std::function<bool(const std::string&)>& ueid_in_use);

}  // namespace cni

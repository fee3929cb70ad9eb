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

/// Plans the SMC-R steps for interface `ifname` in the pod: a sysctl step for
/// each configured sysctl (and disable_ipv6) whose value differs, a pnet entry
/// for `ifname`, the UEID when configured and
/// absent or shared with other attachments (`ueid_in_use`). `pnet_mac` is the eRDMA netdev's MAC (for pnetId
/// "auto"). What the kernel lacks is an error (kSmcUnsupported, naming the piece and the kernel requirement)
/// or, with onUnsupported "warn", a log line and no step.
base::Result<std::vector<Step>> PlanSmcr(const conf::Config& cfg, const std::string& ifname,
                                         const std::string& pnet_mac, netlink::Sysctl& sysctl,
                                         netlink::Smc* smc, const base::Error* smc_error,
                                         const std::function<bool(const std::string&)>& ueid_in_use);

/// CHECK: every sysctl and pnet step of `st` still holds in the pod.
base::Status CheckSmcr(const AttachmentState& st, netlink::Sysctl& sysctl, netlink::Smc* smc);

}  // namespace cni

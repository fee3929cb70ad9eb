#include "cni/driver/rdma.h"

#include <cerrno>

#include "base/log.h"
#include "cni/journal/rdma_device.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using netlink::NetnsMode;

namespace {

Result<RdmaPlan> Problem(const conf::RdmaConfig& cfg, Error e) {
  if (cfg.required) return e;
  // A config without an `rdma` object did not ask for RDMA: no warning on every ADD.
  base::Log::Write(cfg.present ? base::LogLevel::kWarn : base::LogLevel::kInfo,
                   "RDMA: " + e.msg + " (rdma.required is off: continuing without RDMA)");
  return RdmaPlan{};
}

}  // namespace

Result<RdmaPlan> ResolveRdma(const conf::RdmaConfig& cfg, const netlink::LinkInfo& netdev,
                             netlink::Rdma* host, const Error* open_error, const std::string& sysfs_root,
                             const std::string& soft_name) {
  if (!host) {
    // OpenRdma's message already ends in "load ib_core": say the whole fix once, here.
    const bool no_netlink = !open_error || open_error->sys_errno == EPROTONOSUPPORT;
    return Problem(
        cfg, Error(Code::kRdmaUnavailable,
                   (no_netlink ? std::string("rdma: the node's kernel has no RDMA netlink (NETLINK_RDMA)")
                               : "rdma: the node's RDMA netlink cannot be opened: " + open_error->msg) +
                       "; load ib_core and the NIC's RDMA driver, or set rdma.required to false",
                   open_error ? open_error->details : ""));
  }
  RdmaPlan plan;
  ASSIGN_OR_RETURN(plan.mode, host->GetNetnsMode());
  const bool want_exclusive = cfg.netns_mode == conf::RdmaConfig::NetnsMode::kExclusive;
  const bool want_shared = cfg.netns_mode == conf::RdmaConfig::NetnsMode::kShared;
  if ((want_exclusive && plan.mode != NetnsMode::kExclusive) ||
      (want_shared && plan.mode != NetnsMode::kShared)) {
    const NetnsMode want = want_exclusive ? NetnsMode::kExclusive : NetnsMode::kShared;
    if (!cfg.set_system_mode)
      return Error(Code::kRdmaMode,
                   std::string("rdma.netnsMode is ") + netlink::NetnsModeName(want) +
                       " but the kernel's RDMA netns mode is " + netlink::NetnsModeName(plan.mode) +
                       "; set rdma.setSystemMode to switch it, or " + NetnsModeBootFix(want));
    plan.switch_from = plan.mode;
    plan.mode = want;
  }

  if (cfg.soft_roce) {
    plan.soft_name = soft_name;
    return plan;
  }
  ASSIGN_OR_RETURN(auto devices, host->ListDevices());
  ASSIGN_OR_RETURN(auto ports, host->ListPorts());
  plan.pair = netlink::PairNetdev(netdev, devices, ports, sysfs_root);
  if (!plan.pair)
    return Problem(cfg,
                   Error(Code::kRdmaNotPaired,
                         "rdma: no RDMA device pairs with " + netdev.name + " (mac " + netdev.mac +
                             "; tried the ports' netdev, sysfs and the eRDMA GUID rule); check `rdma link` "
                             "on the node, or set rdma.required to false"));
  base::Log::Info("RDMA device " + plan.pair->device.name + " pairs with " + netdev.name + " by " +
                  plan.pair->how);
  if (plan.mode == NetnsMode::kShared && plan.pair->port.state != netlink::kPortStateActive)
    return Problem(
        cfg, Error(Code::kRdmaNotPaired, "rdma: port " + std::to_string(plan.pair->port.port) + " of " +
                                             plan.pair->device.name + " is not ACTIVE (state " +
                                             std::to_string(plan.pair->port.state) + "); check the link of " +
                                             netdev.name));
  return plan;
}

}  // namespace cni

#include "cni/smcr_plan.h"

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "netlink/smc_codec.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

namespace {

// onUnsupported: "error" fails ADD, "warn" logs and goes on without the piece.
Status Unsupported(const conf::Config& cfg, const std::string& what) {
  if (cfg.smcr.on_unsupported_error)
    return Error(Code::kSmcUnsupported,
                 "smcr: " + what + " (set smcr.onUnsupported to \"warn\" to go on without it)");
  base::Log::Warn("smcr: " + what + "; continuing (onUnsupported is warn)");
  return base::Ok();
}

// The interface's entry in the pod's pnet table (ACK parity: what
// `smc_pnet -a <PNETID> -I eth0` does). Only the interface's entry: the kernel
// keeps RDMA-device entries in the root netns alone, node-wide and shared by
// every pod of the device.
Status PlanPnet(const conf::Config& cfg, const SmcrTarget& target, netlink::Smc& smc,
                std::vector<Step>& steps) {
  std::string pnet_id = cfg.smcr.pnet_id;
  if (pnet_id == "auto") {
    pnet_id = netlink::PnetIdFromMac(target.pnet_mac);
    if (pnet_id.empty())
      return Error(
          Code::kInvalidConfig,
          "smcr.pnetId: \"auto\" derives the PNET ID from the eRDMA netdev's MAC, and no eRDMA device is "
          "selected; set device/deviceID or an explicit smcr.pnetId");
  }
  ASSIGN_OR_RETURN(auto entries, smc.ListPnet());
  const auto other = std::find_if(entries.begin(), entries.end(), [&](const netlink::PnetEntry& e) {
    return e.eth_name == target.ifname && e.pnet_id != pnet_id;
  });
  if (other != entries.end())  // one entry per netdev; someone else's stays theirs
    return Unsupported(cfg, "the pod's SMC pnet table already maps " + target.ifname + " to " +
                                other->pnet_id + ", not " + pnet_id);
  const bool have = std::any_of(entries.begin(), entries.end(), [&](const netlink::PnetEntry& e) {
    return e.eth_name == target.ifname && e.pnet_id == pnet_id;
  });
  if (!have) steps.push_back(StepPnet{netlink::PnetEntry{pnet_id, target.ifname, "", 0}});
  if (target.node_smc) {
    // SMC-R then needs an RDMA port with the same ID, from the node's table.
    auto node = target.node_smc->ListPnet();
    const bool mapped =
        node.ok() && std::any_of(node->begin(), node->end(), [&](const netlink::PnetEntry& e) {
          return e.pnet_id == pnet_id && !e.ib_name.empty();
        });
    if (!mapped)
      base::Log::Warn("SMC-R: no RDMA port on the node has PNET ID " + pnet_id +
                      "; SMC will fall back to TCP (NOSMCDEV) until one does, e.g. `smc_pnet -a " + pnet_id +
                      " -D erdma_0 -P 1` on the node");
  }
  return base::Ok();
}

}  // namespace

Result<std::vector<Step>> PlanSmcr(const conf::Config& cfg, const SmcrTarget& target, netlink::Sysctl& sysctl,
                                   netlink::Smc* smc, const Error* smc_error,
                                   const std::function<bool(const std::string&)>& ueid_in_use) {
  std::vector<Step> steps;
  auto sysctls = cfg.smcr.sysctls;
  if (cfg.smcr.disable_ipv6) sysctls.emplace_back("net.ipv6.conf.all.disable_ipv6", "1");
  for (const auto& [name, value] : sysctls) {
    ASSIGN_OR_RETURN(auto current, sysctl.Read(name));
    if (!current) {
      std::string why = "sysctl " + name + " does not exist in this kernel";
      if (name == "net.smc.tcp2smc")
        why +=
            "; tcp2smc exists only on Alibaba Cloud Linux 3 kernels (not on Alibaba Cloud Linux 4 or "
            "upstream Linux)";
      else if (name.rfind("net.smc.", 0) == 0)
        why += "; it needs CONFIG_SMC and the smc module";
      RETURN_IF_ERROR(Unsupported(cfg, why));
      continue;
    }
    if (*current == value) continue;  // nothing to change, nothing to undo
    steps.push_back(StepSysctl{name, value, *current});
  }

  if (!smc) {
    RETURN_IF_ERROR(Unsupported(cfg, "the kernel has no SMC netlink (" +
                                         (smc_error ? smc_error->msg : std::string("unknown")) +
                                         "); SMC-R needs CONFIG_SMC and the smc module"));
    return steps;
  }
  if (target.is_rdma_netdev && cfg.smcr.pnet_id == "auto") {
    // The interface is the RDMA device's own netdev: the kernel pairs them
    // without PNET IDs. A pnet entry here would make SMC look only for RDMA
    // ports with that ID, which outside s390 only the node's root table
    // gives, and fall back to TCP (NOSMCDEV).
    base::Log::Debug("SMC-R: " + target.ifname + " is its RDMA device's netdev; no pnet entry needed");
  } else {
    RETURN_IF_ERROR(PlanPnet(cfg, target, *smc, steps));
  }
  if (!cfg.smcr.ueid.empty()) {
    if (!smc->HasUeid()) {
      RETURN_IF_ERROR(
          Unsupported(cfg,
                      "the kernel has no SMC User EID commands (SMC_GEN_NETLINK); smcr.ueid needs "
                      "a kernel with SMC-Rv2"));
      return steps;
    }
    auto normalized = netlink::NormalizeUeid(cfg.smcr.ueid);
    if (!normalized.ok()) return Error(Code::kInvalidConfig, "smcr.ueid: " + normalized.error().msg);
    const std::string ueid = *normalized;
    ASSIGN_OR_RETURN(auto ueids, smc->ListUeids());
    // Journal it when absent, or when it is there because other attachments
    // added it (then this one shares it); one an operator put there is theirs.
    if (std::find(ueids.begin(), ueids.end(), ueid) == ueids.end() || (ueid_in_use && ueid_in_use(ueid)))
      steps.push_back(StepUeid{ueid});
  }
  return steps;
}

}  // namespace cni

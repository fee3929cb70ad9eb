#include "cni/driver/smcr.h"

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

Status Unsupported(const conf::Config& cfg, const std::string& what) {
  if (cfg.smcr.on_unsupported_error)
    return Error(Code::kSmcUnsupported,
                 "smcr: " + what + " (set smcr.onUnsupported to \"warn\" to go on without it)");
  base::Log::Warn("smcr: " + what + "; continuing (onUnsupported is warn)");
  return base::Ok();
}

bool PnetEntryNeeded(const conf::Config& cfg, const SmcrTarget& target) {
  // An entry would make SMC look only for RDMA ports with that ID, which only the node's root table gives.
  return !(target.is_rdma_netdev && cfg.smcr.pnet_id == "auto");
}

// The interface's pod pnet entry (`smc_pnet -a <ID> -I eth0`); RDMA devices' live in the root netns alone.
Status PlanPnet(const conf::Config& cfg, const SmcrTarget& target, const SmcrFacts& facts,
                std::vector<Step>& steps) {
  // "auto": derived from the eRDMA netdev's MAC ("" without one).
  const std::string pnet_id =
      cfg.smcr.pnet_id == "auto" ? netlink::PnetIdFromMac(target.pnet_mac) : cfg.smcr.pnet_id;
  if (pnet_id.empty())
    return Error(
        Code::kInvalidConfig,
        "smcr.pnetId: \"auto\" derives the PNET ID from the eRDMA netdev's MAC, and no eRDMA device is "
        "selected; set device/deviceID or an explicit smcr.pnetId");
  const auto& entries = facts.pnet;
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
  if (target.node_port_check) {
    const bool mapped = facts.node_pnet && std::any_of(facts.node_pnet->begin(), facts.node_pnet->end(),
                                                       [&](const netlink::PnetEntry& e) {
                                                         return e.pnet_id == pnet_id && !e.ib_name.empty();
                                                       });
    if (!mapped)
      base::Log::Warn("SMC-R: no RDMA port on the node has PNET ID " + pnet_id +
                      "; SMC will fall back to TCP (NOSMCDEV) until one does, e.g. `smc_pnet -a " + pnet_id +
                      " -D erdma_0 -P 1` on the node");
  }
  return base::Ok();
}

std::vector<std::pair<std::string, std::string>> SysctlsOf(const conf::Config& cfg) {
  auto sysctls = cfg.smcr.sysctls;
  if (cfg.smcr.disable_ipv6) sysctls.emplace_back("net.ipv6.conf.all.disable_ipv6", "1");
  return sysctls;
}

}  // namespace

Result<SmcrFacts> ReadSmcr(const conf::Config& cfg, const SmcrTarget& target, netlink::Sysctl& sysctl,
                           netlink::Smc* smc, const Error* smc_error, netlink::Smc* node_smc,
                           const std::function<bool(const std::string&)>& ueid_in_use) {
  SmcrFacts facts;
  for (const auto& [name, value] : SysctlsOf(cfg)) {
    ASSIGN_OR_RETURN(auto current, sysctl.Read(name));
    facts.sysctls[name] = std::move(current);
  }
  if (!smc) {
    facts.smc_error = smc_error ? smc_error->msg : std::string("unknown");
    return facts;
  }
  if (PnetEntryNeeded(cfg, target)) {
    ASSIGN_OR_RETURN(facts.pnet, smc->ListPnet());
    if (target.node_port_check && node_smc) {
      auto node = node_smc->ListPnet();
      if (node.ok()) facts.node_pnet = std::move(node).value();
    }
  }
  if (!cfg.smcr.ueid.empty()) {
    facts.has_ueid = smc->HasUeid();
    auto normalized = netlink::NormalizeUeid(cfg.smcr.ueid);
    if (facts.has_ueid && normalized.ok()) {
      ASSIGN_OR_RETURN(facts.ueids, smc->ListUeids());
      facts.ueid_elsewhere = ueid_in_use && ueid_in_use(*normalized);
    }
  }
  return facts;
}

Result<std::vector<Step>> PlanSmcr(const conf::Config& cfg, const SmcrTarget& target,
                                   const SmcrFacts& facts) {
  std::vector<Step> steps;
  if (facts.smc_error) {
    // Without SMC no sysctl of SMC-R (disable_ipv6 among them) is worth a change in the pod.
    RETURN_IF_ERROR(Unsupported(cfg, *facts.smc_error + "; nothing of SMC-R is set in this pod"));
    return steps;
  }
  for (const auto& [name, value] : SysctlsOf(cfg)) {
    const auto it = facts.sysctls.find(name);
    if (it == facts.sysctls.end() || !it->second) {
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
    if (*it->second == value) continue;  // nothing to change, nothing to undo
    steps.push_back(StepSysctl{name, value, *it->second});
  }

  if (PnetEntryNeeded(cfg, target))
    RETURN_IF_ERROR(PlanPnet(cfg, target, facts, steps));
  else
    base::Log::Debug("SMC-R: " + target.ifname + " is its RDMA device's netdev; no pnet entry needed");
  if (!cfg.smcr.ueid.empty()) {
    if (!facts.has_ueid) {
      RETURN_IF_ERROR(
          Unsupported(cfg,
                      "the kernel has no SMC User EID commands (SMC_GEN_NETLINK); smcr.ueid needs "
                      "a kernel with SMC-Rv2"));
      return steps;
    }
    auto normalized = netlink::NormalizeUeid(cfg.smcr.ueid);
    if (!normalized.ok()) return Error(Code::kInvalidConfig, "smcr.ueid: " + normalized.error().msg);
    const std::string ueid = *normalized;
    // Journal it when absent, or when it is there because other attachments
    // added it (then this one shares it); one an operator put there is theirs.
    if (std::find(facts.ueids.begin(), facts.ueids.end(), ueid) == facts.ueids.end() || facts.ueid_elsewhere)
      steps.push_back(StepUeid{ueid});
  }
  return steps;
}

}  // namespace cni

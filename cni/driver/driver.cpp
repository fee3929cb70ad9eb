// What the drivers share: the link's steps in the pod, and finding a device on the node.
#include "cni/driver/driver.h"

#include "base/log.h"
#include "cni/device/rails.h"
#include "cni/driver/plan.h"
#include "cni/state/claim.h"
#include "conf/node.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

AttachmentState NewState(const Context& ctx, const std::string& pod_name, uint32_t table) {
  AttachmentState st;
  st.network = ctx.cfg.name;
  st.container_id = ctx.env.container_id;
  st.if_name = ctx.env.ifname;
  st.netns = ctx.env.netns;
  st.pod_if_name = pod_name;
  st.table = table;
  st.member_of = ctx.member_of;
  return st;
}

Status ResolveTargetRdma(Context& ctx, const RdmaAccess& rdma, Target& t) {
  const std::string soft_name = "rxe_" + ctx.env.container_id.substr(0, 12) + "_" + PodIfName(ctx);
  ASSIGN_OR_RETURN(t.rdma,
                   ResolveRdma(ctx.cfg.rdma, *t.device, rdma.host, rdma.error, ctx.sysfs_root, soft_name));
  // A named device is taken as it is; a pool passed over the unusable ones already.
  if (std::string why = WhyUnusable(*t.device, t.rdma.pair ? &t.rdma.pair->port : nullptr, ctx.sysfs_root);
      !why.empty())
    base::Log::Warn(t.selection + " selects " + t.device->name + ": " + why + "; attached as it is");
  return base::Ok();
}

std::vector<Step> RdmaNodeSteps(const RdmaPlan& rdma) {
  if (!rdma.switch_from) return {};
  return {StepRdmaMode{netlink::NetnsModeName(rdma.mode), netlink::NetnsModeName(*rdma.switch_from)}};
}

Plan LinkPlan(const Context& ctx, const Target& t, const std::string& pod_name, uint32_t table, Step arrival,
              bool set_mac) {
  const conf::Config& cfg = ctx.cfg;
  Plan plan;
  plan.state = NewState(ctx, pod_name, table);
  plan.addresses = cfg.addresses;
  plan.node_steps = RdmaNodeSteps(t.rdma);
  // The link's arrival, its configuration with `ips`, then its RDMA device.
  plan.link_steps = [&cfg, arrival = std::move(arrival),
                     mac = set_mac ? PodMac(ctx) : std::optional<std::string>(), table,
                     rdma = t.rdma](const std::vector<ipam::IpConfig>& ips) {
    std::vector<Step> steps{arrival};
    // Drivers differ in whether a MAC set through the PF reaches the VF's netdev (mlx5 does not until the VF
    // driver reloads): set it there too, while the link is still down from the move.
    if (mac) steps.emplace_back(StepMac{*mac});
    for (Step& s : PlanPodConfig(cfg, 0, table, ips)) steps.push_back(std::move(s));
    const bool exclusive = rdma.mode == netlink::NetnsMode::kExclusive;
    if (rdma.pair) {
      if (exclusive) steps.emplace_back(StepRdmaMove{rdma.pair->device.name});
    } else if (!rdma.soft_name.empty()) {
      // Soft-RoCE dies when its netdev changes netns, so it is made on the pod side once the link is there;
      // in exclusive mode it registers on the node and moves in.
      steps.emplace_back(StepSoftRdma{rdma.soft_name});
      if (exclusive) steps.emplace_back(StepRdmaMove{rdma.soft_name});
    }
    return steps;
  };
  plan.rdma_device = t.rdma.pair ? t.rdma.pair->device.name : t.rdma.soft_name;
  if (!plan.rdma_device.empty()) plan.rdma_mode = netlink::NetnsModeName(t.rdma.mode);
  if (cfg.smcr_wanted) plan.smcr = SmcrTarget{pod_name, t.device->mac, true, false};
  plan.log_line =
      t.device->name + " as " + pod_name + " (table " + std::to_string(table) +
      (plan.rdma_device.empty() ? "" : ", RDMA device " + plan.rdma_device + " " + plan.rdma_mode) + ")";
  return plan;
}

Result<netlink::LinkInfo> FindOnNode(Context& ctx, const StateStore& store, const RdmaAccess& rdma,
                                     const DeviceQuery& query) {
  ASSIGN_OR_RETURN(auto device, FindDevice(ctx.host, rdma.host, query, ctx.sysfs_root));
  if (device) {
    // Under another name than its claim says: handed back as devN when its pod died without DEL.
    auto owner = FindClaim(store.DevicesDir(), "", device->mac, query.pci);
    if (!owner || owner->device == device->name) return std::move(*device);
    ASSIGN_OR_RETURN(bool free, FreeStaleClaim(ctx, store, *owner));
    if (!free) return std::move(*device);
    ASSIGN_OR_RETURN(device, FindDevice(ctx.host, rdma.host, query, ctx.sysfs_root));
    if (device) return std::move(*device);
  }
  if (auto owner = FindClaim(store.DevicesDir(), query.name, query.mac, query.pci)) {
    ASSIGN_OR_RETURN(bool free, FreeStaleClaim(ctx, store, *owner));
    if (free) {
      ASSIGN_OR_RETURN(device, FindDevice(ctx.host, rdma.host, query, ctx.sysfs_root));
      if (device) return std::move(*device);
      owner = FindClaim(store.DevicesDir(), query.name, query.mac, query.pci);
    }
    if (owner) return InUseError(query.Describe(), *owner);
  }
  if (!query.rdma.empty() && !rdma.host)
    return Error(Code::kRdmaUnavailable,
                 ctx.cfg.device.Describe() +
                     " names an RDMA device but the node's kernel has no RDMA netlink: " +
                     (rdma.error ? rdma.error->msg : ""));
  return Error(Code::kDeviceNotFound, query.Describe() + " is not on the node; fix " +
                                          ctx.cfg.device.Describe() + " or check `ip link` on the node");
}

Result<bool> FreeStaleClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner) {
  if (ctx.recover_stale_claim == nullptr) return false;
  return ctx.recover_stale_claim(ctx, store, owner);
}

}  // namespace cni

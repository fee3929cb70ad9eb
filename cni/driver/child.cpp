// Modes macvlan and ipvlan: a child of the node's device is made in the pod;
// the device stays, shared by the children of many pods.
#include "cni/driver/child.h"

#include "base/log.h"
#include "cni/driver/driver.h"
#include "cni/driver/plan.h"
#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "cni/state/claim.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

StepChild ChildStep(const conf::Config& cfg, const std::optional<std::string>& mac,
                    const netlink::LinkInfo& parent, const std::string& pod_name) {
  StepChild c;
  c.parent = parent.name;
  c.spec.kind = conf::ModeName(cfg.mode);
  c.spec.parent_index = parent.index;
  c.spec.name = pod_name;
  if (cfg.mode == conf::Mode::kMacvlan) {
    c.spec.mode = static_cast<uint32_t>(cfg.macvlan.mode);
    c.spec.source_macs = cfg.macvlan.source_macs;
    if (mac) c.spec.mac = *mac;
  } else {
    c.spec.mode = static_cast<uint32_t>(cfg.ipvlan.mode);
  }
  return c;
}

namespace {

// A child shares its parent's RDMA device, which is possible only where every netns sees it: shared mode. A
// Soft-RoCE device on the child is the child's own and may go exclusive.
Status CheckChildRdma(const conf::Config& cfg, const netlink::LinkInfo& parent, const RdmaPlan& plan) {
  const char* mode = conf::ModeName(cfg.mode);
  if (plan.pair && plan.mode == netlink::NetnsMode::kExclusive)
    return Error(Code::kInvalidConfig,
                 std::string("rdma.netnsMode: ") + mode + " children share " + parent.name +
                     "'s RDMA device " + plan.pair->device.name +
                     ", and in exclusive mode an RDMA device lives in one netns only; use shared mode "
                     "(rdma.netnsMode \"shared\"), or mode \"move\" or \"vf\" to give the pod a device "
                     "of its own");
  const bool erdma = plan.pair && (plan.pair->how == netlink::kPairedByErdmaGuid ||
                                   plan.pair->device.name.rfind("erdma", 0) == 0);
  if (erdma && cfg.mode == conf::Mode::kMacvlan && cfg.macvlan.mode != conf::MacvlanMode::kPassthru)
    base::Log::Warn(std::string("macvlan.mode \"") + conf::MacvlanModeName(cfg.macvlan.mode) + "\" on " +
                    parent.name +
                    ", an eRDMA ENI: the VPC drops frames from a MAC the ENI does not own, "
                    "so this child's traffic will not leave the node; use macvlan.mode \"passthru\" or "
                    "mode \"ipvlan\"");
  return base::Ok();
}

class Child : public Driver {
 public:
  Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const override {
    const DeviceQuery query = QueryFor(ctx.cfg.device);
    Target t;
    ASSIGN_OR_RETURN(t.device, FindOnNode(ctx, store, rdma, query));
    t.hold = Hold::kShare;
    t.hold_name = t.device->name;
    t.selection = query.Describe();
    return t;
  }
  Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const override {
    // The result names the parent's PCI function: the HCA the child's traffic uses.
    t.pci = PciAddressOf(ctx.sysfs_root, t.device->name);
    // The kernel refuses a child's MTU above its parent's with a bare EINVAL: said here, before anything
    // changes.
    if (ctx.cfg.mtu && t.device->mtu && *ctx.cfg.mtu > t.device->mtu) {
      const std::string most = std::to_string(t.device->mtu);
      return Error(Code::kInvalidConfig, "mtu: " + std::to_string(*ctx.cfg.mtu) + " is more than " +
                                             t.device->name + "'s MTU, " + most + ", which a " +
                                             conf::ModeName(ctx.cfg.mode) +
                                             " child cannot exceed; set mtu to at "
                                             "most " +
                                             most + ", or raise " + t.device->name + "'s MTU on the node");
    }
    RETURN_IF_ERROR(ResolveTargetRdma(ctx, rdma, t));
    return CheckChildRdma(ctx.cfg, *t.device, t.rdma);
  }
  Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                        uint32_t table) const override {
    Plan plan =
        LinkPlan(ctx, t, pod_name, table, ChildStep(ctx.cfg, PodMac(ctx), *t.device, pod_name), false);
    plan.log_line = std::string("attached a ") + conf::ModeName(ctx.cfg.mode) + " child of " + plan.log_line;
    return plan;
  }
  void UndoWithoutState(Context& ctx, const StateStore& store, const std::string& path, StepEnv& env,
                        const std::string& pod_name, std::vector<Error>& errors) const override {
    // The pod's link of our name and kind, and our share of the parent.
    if (env.pod) {
      StepChild c;
      c.spec.kind = conf::ModeName(ctx.cfg.mode);
      c.spec.name = pod_name;
      if (Status s = DeleteChild(c, env); !s.ok()) errors.push_back(std::move(s).error());
    }
    if (errors.empty()) DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms);
  }
};

}  // namespace

const Driver& ChildDriver() {
  static const Child driver;
  return driver;
}

}  // namespace cni

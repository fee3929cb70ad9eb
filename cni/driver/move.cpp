#include "cni/driver/move.h"

#include "cni/device/choice.h"
#include "cni/driver/driver.h"
#include "cni/driver/plan.h"

namespace cni {

using base::Result;
using base::Status;

Status ResolveMoved(Context& ctx, const RdmaAccess& rdma, Target& t) {
  const netlink::LinkInfo& dev = *t.device;
  ASSIGN_OR_RETURN(t.addrs, ctx.host.ListAddrs(dev.index));
  ASSIGN_OR_RETURN(t.routes, ctx.host.ListRoutes(dev.index));
  if (t.pci.empty()) t.pci = PciAddressOf(ctx.sysfs_root, dev.name);
  return ResolveTargetRdma(ctx, rdma, t);
}

Plan PlanMoved(const Context& ctx, const Target& t, const std::string& pod_name, uint32_t table,
               bool set_mac) {
  const netlink::LinkInfo& dev = *t.device;
  Plan plan = LinkPlan(ctx, t, pod_name, table, StepMove{pod_name}, set_mac);
  DeviceOrigin& o = plan.state.origin;
  o.name = dev.name;
  o.index = dev.index;
  o.mac = dev.mac;
  o.mtu = dev.mtu;
  o.up = dev.up;
  o.kind = dev.kind;
  o.addrs = RestorableAddrs(t.addrs);
  o.routes = RestorableRoutes(t.routes);
  return plan;
}

namespace {

class Move : public Driver {
 public:
  Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const override {
    const DeviceQuery query = QueryFor(ctx.cfg.device);
    Target t;
    ASSIGN_OR_RETURN(t.device, FindOnNode(ctx, store, rdma, query));
    RETURN_IF_ERROR(RefuseNodeOwnDevice(ctx, *t.device));
    t.hold = Hold::kClaim;
    t.hold_name = t.device->name;
    t.selection = query.Describe();
    return t;
  }
  Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const override {
    return ResolveMoved(ctx, rdma, t);
  }
  Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                        uint32_t table) const override {
    Plan plan = PlanMoved(ctx, t, pod_name, table, false);
    plan.log_line = "attached " + plan.log_line;
    return plan;
  }
};

}  // namespace

const conf::ModeSpec kMoveMode{.name = "move",
                               .takes_device = true,
                               .from_pool = true,
                               .moves_rdma = true,
                               .pod_gets = "the node device itself",
                               .driver = DriverOf<Move>};

}  // namespace cni

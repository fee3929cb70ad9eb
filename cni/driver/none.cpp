#include "cni/driver/none.h"

#include "cni/driver/driver.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

namespace {

class None : public Driver {
 public:
  Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const override {
    if (ctx.cfg.rdma.netns_mode == conf::RdmaConfig::NetnsMode::kExclusive)
      return Error(Code::kInvalidConfig,
                   "rdma.netnsMode: mode \"none\" leaves the RDMA device on the node; "
                   "use \"shared\" or \"auto\"");
    Target t;
    t.enters_pod = false;
    // A selected device's netdev MAC is the PNET ID.
    if (!ctx.cfg.device.value.empty()) {
      ASSIGN_OR_RETURN(t.device, FindOnNode(ctx, store, rdma, QueryFor(ctx.cfg.device)));
    }
    return t;
  }
  Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const override {
    if (!t.device) return base::Ok();
    conf::RdmaConfig rc = ctx.cfg.rdma;
    rc.soft_roce = false;
    ASSIGN_OR_RETURN(t.rdma, ResolveRdma(rc, *t.device, rdma.host, rdma.error, ctx.sysfs_root, ""));
    return base::Ok();
  }
  Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string&, uint32_t) const override {
    Plan plan;
    plan.pass_through = true;
    if (!ctx.cfg.smcr_wanted) {
      plan.result_only = true;
      return plan;
    }
    plan.state = NewState(ctx, ctx.env.ifname, 0);
    plan.node_steps = RdmaNodeSteps(t.rdma);
    if (t.rdma.pair) {
      plan.state.rdma_device = t.rdma.pair->device.name;
      plan.state.rdma_mode = "shared";
    }
    // Not an RDMA netdev: its pnet entry needs an RDMA port with the same ID on the node (warned when none).
    plan.smcr = SmcrTarget{ctx.env.ifname, t.device ? t.device->mac : "", false, true};
    plan.log_line = "SMC-R on " + ctx.env.ifname + " (mode none)";
    return plan;
  }
};

}  // namespace

const conf::ModeSpec kNoneMode{
    .name = "none", .pod_gets = "nothing new: SMC-R on the primary's interface", .driver = DriverOf<None>};

}  // namespace cni

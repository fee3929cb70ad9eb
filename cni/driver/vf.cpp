#include "cni/driver/vf.h"

#include "base/log.h"
#include "cni/device/choice.h"
#include "cni/driver/driver.h"
#include "cni/driver/sriov.h"
#include "cni/state/claim.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

Status ResolveMoved(Context& ctx, const RdmaAccess& rdma, Target& t);
Plan PlanMoved(const Context& ctx, const Target& t, const std::string& pod_name, uint32_t table,
               bool set_mac);

namespace {

// The VF the config selects; nullopt when a selected netdev is not on the node, code 7 when it is no VF.
Result<std::optional<VfTarget>> FindVfTarget(Context& ctx, netlink::Rdma* rdma, const DeviceQuery& q,
                                             netlink::Vf& vfs) {
  const std::string key = ctx.cfg.device.Describe();
  std::string pci = q.pci;
  if (pci.empty()) {
    ASSIGN_OR_RETURN(auto dev, FindDevice(ctx.host, rdma, q, ctx.sysfs_root));
    if (!dev) return std::optional<VfTarget>();
    pci = PciAddressOf(ctx.sysfs_root, dev->name);
    if (pci.empty())
      return Error(Code::kInvalidConfig,
                   key + ": " + dev->name +
                       " is not a PCI device, so not an SR-IOV VF; mode \"vf\" takes a VF, "
                       "use mode \"move\" to give a pod a whole device");
  }
  ASSIGN_OR_RETURN(VfTarget t, ResolveVf(ctx.host, vfs, ctx.sysfs_root, pci, key));
  return std::optional<VfTarget>(std::move(t));
}

// A VF that has a kernel driver (or none) but no netdev on the node and that no attachment claims.
Error VfWithoutNetdev(const Context& ctx, const VfTarget& vf) {
  const std::string what = ctx.cfg.device.Describe() + ": VF " + vf.sriov.pci + " (vf " +
                           std::to_string(vf.sriov.vf) + " of " + vf.pf.name + ")";
  if (vf.sriov.driver.empty())
    return Error(Code::kDeviceNotFound, what +
                                            " is bound to no driver; bind it to its NIC's VF driver for a "
                                            "netdev, or to vfio-pci for a user-space one");
  return Error(Code::kDeviceNotFound, what + " has driver " + vf.sriov.driver +
                                          " but no netdev on the node and no attachment holds it; check "
                                          "`ls /sys/bus/pci/devices/" +
                                          vf.sriov.pci + "/net`");
}

bool Userspace(const Target& t) {
  return t.vf && !t.vf->netdev && t.vf->sriov.netdev.empty() && t.vf->sriov.userspace();
}

class Vf : public Driver {
 public:
  Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const override {
    const conf::Config& cfg = ctx.cfg;
    const DeviceQuery query = QueryFor(cfg.device);
    Target t;
    t.hold = Hold::kClaim;
    ASSIGN_OR_RETURN(t.vfs, ctx.netns.OpenVf());
    ASSIGN_OR_RETURN(t.vf, FindVfTarget(ctx, rdma.host, query, *t.vfs));
    if (Userspace(t)) {
      const std::string& pci = t.vf->sriov.pci;
      const std::string& driver = t.vf->sriov.driver;
      base::Log::Info("VF " + pci + " is bound to " + driver +
                      ": it has no netdev, so only its settings change");
      if (cfg.smcr_wanted) {
        Error e(Code::kSmcUnsupported, "SMC-R: VF " + pci + " is bound to " + driver +
                                           ", so there is no netdev to run SMC-R on; bind it to its NIC's VF "
                                           "driver, or set smcr.onUnsupported to \"warn\"");
        if (cfg.smcr.on_unsupported_error) return e;
        base::Log::Warn(e.msg);
      }
      if (cfg.rdma.netns_mode == conf::RdmaConfig::NetnsMode::kExclusive || cfg.rdma.soft_roce)
        base::Log::Info("rdma: VF " + pci + " belongs to user space; its RDMA, if any, is the application's");
      t.hold_name = t.pci = pci;
      t.selection = "VF " + pci;
      t.enters_pod = false;
      return t;
    }
    if (t.vf) t.device = t.vf->netdev;
    // A claim under another name: its holder's pod may have died without DEL (as in FindOnNode).
    const std::optional<ClaimOwner> owner =
        t.device ? FindClaim(store.DevicesDir(), "", t.device->mac, t.vf ? t.vf->sriov.pci : query.pci)
                 : FindClaim(store.DevicesDir(), query.name, query.mac, query.pci);
    if (owner && (!t.device || owner->device != t.device->name)) {
      ASSIGN_OR_RETURN(bool free, FreeStaleClaim(ctx, store, *owner));
      if (free) {
        ASSIGN_OR_RETURN(t.vf, FindVfTarget(ctx, rdma.host, query, *t.vfs));
        t.device = t.vf ? t.vf->netdev : std::nullopt;
      }
    }
    if (!t.device) {
      if (auto owner = FindClaim(store.DevicesDir(), query.name, query.mac, query.pci))
        return InUseError(query.Describe(), *owner);
      if (t.vf && t.vf->sriov.netdev.empty()) return VfWithoutNetdev(ctx, *t.vf);
      ASSIGN_OR_RETURN(t.device, FindOnNode(ctx, store, rdma, query));
    }
    RETURN_IF_ERROR(RefuseNodeOwnDevice(ctx, *t.device));
    t.hold_name = t.device->name;
    t.selection = query.Describe();
    if (t.vf) t.pci = t.vf->sriov.pci;
    return t;
  }

  Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const override {
    if (!t.enters_pod) return base::Ok();
    return ResolveMoved(ctx, rdma, t);
  }

  Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                        uint32_t table) const override {
    const conf::Config& cfg = ctx.cfg;
    const VfTarget& vf = *t.vf;
    StepVf step = PlanVf(cfg, PodMac(ctx), vf);
    const std::string of = "VF " + vf.sriov.pci + " (vf " + std::to_string(vf.sriov.vf) + " of " + vf.pf.name;
    if (!t.enters_pod) {
      Plan plan;
      plan.state = NewState(ctx, pod_name, 0);
      plan.state.origin.name = vf.sriov.pci;
      if (!step.applied.empty()) plan.claim_steps.push_back(step);
      plan.node_steps.push_back(std::move(step));
      // The application behind vfio-pci reads the addresses from the result.
      if (cfg.addresses == conf::AddressMode::kIpam) plan.addresses = conf::AddressMode::kIpam;
      plan.result_mac = PodMac(ctx).value_or(vf.state.mac);
      if (plan.result_mac == "00:00:00:00:00:00") plan.result_mac.clear();
      plan.log_line = "attached " + of + ", " + vf.sriov.driver + ")";
      return plan;
    }
    Plan plan = PlanMoved(ctx, t, pod_name, table, true);
    if (!step.applied.empty()) {
      plan.claim_steps.push_back(step);
      plan.node_steps.push_back(std::move(step));
    }
    plan.log_line = "attached " + of + "), netdev " + plan.log_line;
    return plan;
  }
  bool HasPodLink(const AttachmentState& st) const override {
    const auto* vf = FindStep<StepVf>(st.steps);
    return !vf || !vf->netdev.empty();
  }
  bool PresentWithoutNetdev(const Context& ctx, const DeviceQuery& query) const override {
    return !query.pci.empty() && FindVf(ctx.sysfs_root, query.pci, ctx.cfg.device.Describe()).ok();
  }
};

}  // namespace

const conf::ModeSpec kVfMode{.name = "vf",
                             .options_key = "vf",
                             .takes_device = true,
                             .sets_mac = true,
                             .sets_guid = true,
                             .moves_rdma = true,
                             .pod_gets = "an SR-IOV VF's netdev, set up through its PF",
                             .parse = ParseVfOptions,
                             .driver = DriverOf<Vf>};

}  // namespace cni

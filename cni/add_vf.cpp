// ADD in mode vf: finding the VF, and the VF without a netdev (vfio-pci and
// other user-space drivers). A VF with a netdev goes on through the move
// path in add.cpp.
#include "base/log.h"
#include "cni/add_common.h"
#include "cni/claim.h"
#include "cni/ipam_versions.h"
#include "cni/result.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

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

Result<json> AddUserspaceVf(Context& ctx, const StateStore& store, const std::string& path,
                            const VfTarget& vf, netlink::Vf& vfs) {
  const conf::Config& cfg = ctx.cfg;
  const std::string& pci = vf.sriov.pci;
  const std::string driver = vf.sriov.driver;
  base::Log::Info("VF " + pci + " is bound to " + driver + ": it has no netdev, so only its settings change");
  if (cfg.smcr_wanted) {
    Error e(Code::kSmcUnsupported,
            "SMC-R: VF " + pci + " is bound to " + driver +
                ", so there is no netdev to run SMC-R on; bind it to its NIC's VF driver, "
                "or set smcr.onUnsupported to \"warn\"");
    if (cfg.smcr.on_unsupported_error) return e;
    base::Log::Warn(e.msg);
  }
  if (cfg.rdma.netns_mode == conf::RdmaConfig::NetnsMode::kExclusive || cfg.rdma.soft_roce)
    base::Log::Info("rdma: VF " + pci + " belongs to user space; its RDMA, if any, is the application's");

  // The claim is the VF's PCI address: it has no netdev name.
  ASSIGN_OR_RETURN(DeviceClaim claim, DeviceClaim::Lock(store.DevicesDir(), pci, ctx.lock_wait_ms));
  const std::optional<ClaimOwner> prior_owner = claim.Owner();
  if (prior_owner && ClaimIsLive(*prior_owner))
    return Error(Code::kTryAgainLater, "VF " + pci + " is in use by container " + prior_owner->container_id +
                                           " (network " + prior_owner->network + ", interface " +
                                           prior_owner->if_name +
                                           "); it returns when that attachment is deleted");
  AttachmentState st;
  st.network = cfg.name;
  st.container_id = ctx.env.container_id;
  st.if_name = ctx.env.ifname;
  st.netns = ctx.env.netns;
  st.pod_if_name = PodIfName(ctx);
  st.origin.name = pci;
  const StepVf step = PlanVf(cfg, vf);
  if (Status owned = claim.SetOwner(ClaimOwner{cfg.name, ctx.env.container_id, ctx.env.ifname, path, pci, "",
                                               pci, step.applied.empty() ? json() : StepToJson(step)});
      !owned.ok()) {
    // A refused ADD leaves dataDir as it found it: the claim file Lock made goes.
    if (!prior_owner) claim.Remove();
    return std::move(owned).error();
  }
  Journal journal(store, path, st);
  StepEnv env{ctx.host};
  env.ipam = &ctx.ipam;
  env.host_vf = &vfs;

  auto apply = [&]() -> Result<json> {
    RETURN_IF_ERROR(journal.Run({step}, env));
    std::vector<ResultIp> ips;
    if (cfg.addresses == conf::AddressMode::kIpam) {
      // Nothing to put them on: the application behind vfio-pci reads them
      // from the result.
      ASSIGN_OR_RETURN(json r, RunIpamAdd(ctx, journal, env));
      ASSIGN_OR_RETURN(auto got, IpsFromIpam(r));
      for (const auto& ip : got) ips.push_back(ResultIp{ip.address, ip.gateway});
    }
    std::string mac = cfg.mac.value_or(vf.state.mac);
    if (mac == "00:00:00:00:00:00") mac.clear();
    ResultInterface iface{st.pod_if_name, mac, ctx.env.netns, std::nullopt, "", pci};
    json result = AppendToResult(cfg.prev_result, cfg.cni_version, iface, ips, {});
    st.complete = true;
    st.result = result;
    RETURN_IF_ERROR(journal.Persist());
    return result;
  };
  Result<json> result = apply();
  if (result.ok()) {
    base::Log::Info("attached VF " + pci + " (vf " + std::to_string(vf.sriov.vf) + " of " + vf.pf.name +
                    ", " + driver + ")");
    return result;
  }
  Error err = std::move(result).error();
  base::Log::Error("ADD failed: " + err.msg + "; rolling back");
  Error back = RollBack(err, st, env, journal, store, path);
  if (back.code != Code::kRollbackIncomplete) claim.Remove();
  return back;
}

}  // namespace cni

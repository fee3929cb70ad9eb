// ADD: select the device, claim it, journal, move it into the pod, configure
// it there; on any failure undo everything done so far.
#include <cerrno>

#include "base/log.h"
#include "cni/add_common.h"
#include "cni/claim.h"
#include "cni/commands.h"
#include "cni/device.h"
#include "cni/ipam_versions.h"
#include "cni/journal.h"
#include "cni/plan.h"
#include "cni/rdma.h"
#include "cni/result.h"
#include "cni/smcr.h"
#include "cni/state.h"
#include "ipam/inherit.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

std::string PodIfName(const Context& ctx) {
  // Chained after a primary plugin, CNI_IFNAME is the primary's interface.
  return ctx.cfg.chained() ? ctx.cfg.if_name : ctx.env.ifname;
}

Result<std::vector<ipam::IpConfig>> IpsFromIpam(const json& result) {
  ASSIGN_OR_RETURN(auto ips, ParseIpamIps(result));
  std::vector<ipam::IpConfig> out;
  for (const auto& ip : ips) out.push_back(ipam::IpConfig{ip.address, ip.gateway});
  if (out.empty()) return Error(Code::kIpam, "ipam " + std::string("returned no IP addresses"));
  return out;
}

Result<json> RunIpamAdd(Context& ctx, Journal& journal, StepEnv& env) {
  StepIpam step{ctx.cfg.ipam_type, IpamDelegateConfig(ctx.cfg)};
  RETURN_IF_ERROR(journal.Run({step}, env));
  auto r = ctx.ipam.Run(step.type, "ADD", step.config.dump());
  // A plugin that never started (not on CNI_PATH) allocated nothing: no
  // IPAM DEL is owed, not by the rollback nor by any later DEL.
  if (!r.ok() && r.error().changed_nothing) journal.DropLast();
  return r;
}

Error RollBack(Error err, AttachmentState& st, StepEnv& env, Journal& journal, const StateStore& store,
               const std::string& path) {
  std::vector<Error> undo = UndoSteps(st, env);
  if (!undo.empty()) {
    // Keep the state: DEL finishes what rollback could not.
    (void)journal.Persist();
    Error joined = JoinErrors(undo, "rollback");
    return Error(Code::kRollbackIncomplete,
                 err.msg + "; rollback incomplete: " + joined.msg + " (state kept in " + path + " for DEL)",
                 joined.details);
  }
  (void)store.Remove(path);
  return err;
}

namespace {

json BuildResult(const Context& ctx, const AttachmentState& st, const netlink::LinkInfo& pod_link,
                 const std::vector<ipam::IpConfig>& ips, const std::string& pci_id) {
  ResultInterface iface{st.pod_if_name, pod_link.mac, ctx.env.netns, std::nullopt, st.rdma_device, pci_id};
  if (ctx.cfg.mtu) iface.mtu = *ctx.cfg.mtu;
  std::vector<ResultIp> rips;
  for (const auto& ip : ips) rips.push_back(ResultIp{ip.address, ip.gateway});
  std::vector<ResultRoute> routes;
  for (const auto& step : st.steps) {
    const auto* r = std::get_if<StepRoute>(&step);
    if (!r) continue;
    ResultRoute rr;
    rr.dst = r->route.dst.IsDefault() ? r->route.dst : r->route.dst.Network();
    rr.gw = r->route.gateway;
    if (r->route.metric) rr.priority = r->route.metric;
    if (r->route.table != netlink::kTableMain) rr.table = r->route.table;
    if (r->route.scope != netlink::kScopeUniverse) rr.scope = r->route.scope;
    routes.push_back(rr);
  }
  return AppendToResult(ctx.cfg.prev_result, ctx.cfg.cni_version, iface, rips, routes);
}

// A child shares its parent's RDMA device, which is possible only where
// every netns sees it: shared mode. A Soft-RoCE device on the child is the
// child's own and may go exclusive.
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

// The pod-side handles SMC-R steps use; they live as long as the journal's env.
struct SmcHandles {
  std::unique_ptr<netlink::Sysctl> sysctl;
  std::unique_ptr<netlink::Smc> smc;
};

// Plans SMC-R for the target in the pod and runs the steps through the journal.
base::Status ApplySmcr(Context& ctx, const SmcrTarget& target, Journal& journal, StepEnv& env,
                       SmcHandles& h) {
  ASSIGN_OR_RETURN(h.sysctl, ctx.netns.OpenSysctl(ctx.env.netns));
  auto smc = ctx.netns.OpenSmc(ctx.env.netns);
  std::optional<Error> smc_error;
  if (smc.ok())
    h.smc = std::move(smc).value();
  else
    smc_error = std::move(smc).error();
  env.pod_sysctl = h.sysctl.get();
  env.pod_smc = h.smc.get();
  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  const std::string self = journal.path();
  env.ueid_in_use = [store, self](const std::string& ueid) { return UeidUsedElsewhere(store, self, ueid); };
  ASSIGN_OR_RETURN(auto steps, PlanSmcr(ctx.cfg, target, *h.sysctl, h.smc.get(),
                                        smc_error ? &*smc_error : nullptr, env.ueid_in_use));
  base::Log::Info("SMC-R for " + target.ifname + ": " + std::to_string(steps.size()) + " step(s)");
  return journal.Run(steps, env);
}

// Mode none: no netdev moves. Chained after the primary plugin, SMC-R goes on
// its interface (CNI_IFNAME) and prevResult passes through unchanged.
Result<json> AddNone(Context& ctx, const StateStore& store, const std::string& path) {
  const conf::Config& cfg = ctx.cfg;
  json result = ConvertResult(
      cfg.prev_result.is_null() ? json{{"cniVersion", cfg.cni_version}} : cfg.prev_result, cfg.cni_version);
  if (cfg.rdma.netns_mode == conf::RdmaConfig::NetnsMode::kExclusive)
    return Error(Code::kInvalidConfig,
                 "rdma.netnsMode: mode \"none\" leaves the RDMA device on the node; "
                 "use \"shared\" or \"auto\"");

  // The RDMA checks of shared mode, when a device is selected: it exists,
  // pairs, its port is ACTIVE; its netdev's MAC is the PNET ID.
  std::optional<netlink::PairMatch> pair;
  std::string pnet_mac;
  if (!cfg.device.value.empty()) {
    auto host_rdma = ctx.netns.OpenRdma("");
    netlink::Rdma* rdma = host_rdma.ok() ? host_rdma->get() : nullptr;
    const DeviceQuery query = QueryFor(cfg.device);
    ASSIGN_OR_RETURN(auto device, FindDevice(ctx.host, rdma, query, ctx.sysfs_root));
    if (!device)
      return Error(Code::kDeviceNotFound,
                   query.Describe() + " is not on the node; fix " + cfg.device.Describe());
    pnet_mac = device->mac;
    conf::RdmaConfig rc = cfg.rdma;
    rc.soft_roce = false;
    ASSIGN_OR_RETURN(
        RdmaPlan plan,
        PrepareRdma(rc, *device, rdma, host_rdma.ok() ? nullptr : &host_rdma.error(), ctx.sysfs_root, ""));
    pair = plan.pair;
  }
  if (!cfg.smcr_wanted) return result;  // nothing to change, nothing to remember

  AttachmentState st;
  st.network = cfg.name;
  st.container_id = ctx.env.container_id;
  st.if_name = ctx.env.ifname;
  st.netns = ctx.env.netns;
  st.pod_if_name = ctx.env.ifname;
  if (pair) {
    st.rdma_device = pair->device.name;
    st.rdma_mode = "shared";
  }
  Journal journal(store, path, st);
  StepEnv env{ctx.host};
  SmcHandles smc;
  // The primary's interface is not an RDMA netdev: its pnet entry needs an
  // RDMA port with the same ID on the node; warn when there is none.
  auto node_smc = ctx.netns.OpenSmc("");
  Status applied =
      ApplySmcr(ctx, SmcrTarget{ctx.env.ifname, pnet_mac, false, node_smc.ok() ? node_smc->get() : nullptr},
                journal, env, smc);
  if (applied.ok()) {
    st.complete = true;
    st.result = result;
    applied = journal.Persist();
  }
  if (applied.ok()) return result;
  return RollBack(std::move(applied).error(), st, env, journal, store, path);
}

}  // namespace

Result<json> Add(Context& ctx) {
  const conf::Config& cfg = ctx.cfg;
  // CNI_NETNS first: a path that is not a network namespace is bad input,
  // refused before anything is created on the node or in dataDir.
  ASSIGN_OR_RETURN(auto pod, ctx.netns.Open(ctx.env.netns));
  StateStore store(cfg.data_dir, cfg.name);
  RETURN_IF_ERROR(store.Prepare());
  const std::string path = store.PathFor(ctx.env.container_id, ctx.env.ifname);
  const std::string pod_name = PodIfName(ctx);

  {
    // Under this name, or an older erdma-cni's.
    auto existing = store.Load(store.Locate(ctx.env.container_id, ctx.env.ifname));
    if (!existing.ok())
      return Error(Code::kState,
                   existing.error().msg + "; refusing to reuse the attachment: run DEL for it first");
    if (*existing)
      return Error(Code::kTryAgainLater, "attachment " + ctx.env.container_id + "/" + ctx.env.ifname +
                                             " already exists (" + path + "); run DEL for it first");
  }
  if (cfg.mode == conf::Mode::kNone) return AddNone(ctx, store, path);

  // 1. The device, on the node, claimed by us. RDMA netlink is optional:
  // a kernel without it fails socket() at once.
  auto host_rdma = ctx.netns.OpenRdma("");
  netlink::Rdma* rdma = host_rdma.ok() ? host_rdma->get() : nullptr;
  ASSIGN_OR_RETURN(AddTarget target,
                   FindAddTarget(ctx, store, path, rdma, host_rdma.ok() ? nullptr : &host_rdma.error()));
  if (target.done) return std::move(*target.done);
  const netlink::LinkInfo& device = target.device;
  const std::optional<VfTarget>& vf = target.vf;
  std::optional<DeviceClaim>& claim = target.claim;
  NewClaimGuard unowned(claim, target.new_claim);

  // 2. The pod.
  ASSIGN_OR_RETURN(auto clash, pod->FindLink(pod_name));
  if (clash)
    return Error(Code::kInvalidConfig, (cfg.chained() ? "ifName" : "CNI_IFNAME") +
                                           std::string(": the pod already has an interface named ") +
                                           pod_name + "; choose another name");
  ASSIGN_OR_RETURN(auto pod_rules, pod->ListRules());
  ASSIGN_OR_RETURN(auto pod_routes, pod->ListRoutes(0));
  ASSIGN_OR_RETURN(uint32_t table, ChooseTable(cfg.routing, pod_rules, pod_routes));

  // 3. What the device looks like now: what DEL puts back.
  AttachmentState st;
  st.network = cfg.name;
  st.container_id = ctx.env.container_id;
  st.if_name = ctx.env.ifname;
  st.netns = ctx.env.netns;
  st.pod_if_name = pod_name;
  st.table = table;
  std::optional<StepChild> child_step;
  std::optional<StepVf> vf_step;
  if (vf) {
    StepVf planned = PlanVf(cfg, *vf);
    if (!planned.applied.empty()) vf_step = std::move(planned);
  }
  if (cfg.child()) {
    child_step = ChildStep(cfg, device, pod_name);
  } else {
    st.origin.name = device.name;
    st.origin.index = device.index;
    st.origin.mac = device.mac;
    st.origin.mtu = device.mtu;
    st.origin.up = device.up;
    st.origin.kind = device.kind;
    ASSIGN_OR_RETURN(auto addrs, ctx.host.ListAddrs(device.index));
    ASSIGN_OR_RETURN(auto routes, ctx.host.ListRoutes(device.index));
    st.origin.addrs = RestorableAddrs(addrs);
    st.origin.routes = RestorableRoutes(routes);
  }

  // 3b. RDMA: mode, pairing; nothing changes yet (a mode switch aside).
  const std::string soft_name = "rxe_" + ctx.env.container_id.substr(0, 12) + "_" + pod_name;
  ASSIGN_OR_RETURN(RdmaPlan rdma_plan,
                   PrepareRdma(cfg.rdma, device, rdma, host_rdma.ok() ? nullptr : &host_rdma.error(),
                               ctx.sysfs_root, soft_name));
  if (cfg.child()) RETURN_IF_ERROR(CheckChildRdma(cfg, device, rdma_plan));
  std::unique_ptr<netlink::Rdma> pod_rdma;
  if (rdma_plan.active()) {
    ASSIGN_OR_RETURN(pod_rdma, ctx.netns.OpenRdma(ctx.env.netns));
  }

  if (claim)
    RETURN_IF_ERROR(claim->SetOwner(
        ClaimOwner{cfg.name, ctx.env.container_id, ctx.env.ifname, path, device.name, device.mac,
                   PciAddressOf(ctx.sysfs_root, device.name), vf_step ? StepToJson(*vf_step) : json()}));
  unowned.Disarm();  // from here the journal's rollback removes it
  if (cfg.child()) {
    // The state first: a share whose state is missing is stale.
    Status shared = store.Save(path, st);
    if (shared.ok())
      shared = ShareParent(store.DevicesDir(), store.ChildrenDir(), device.name,
                           ClaimOwner{cfg.name, ctx.env.container_id, ctx.env.ifname, path, device.name,
                                      device.mac, "", json()},
                           ctx.lock_wait_ms);
    if (!shared.ok()) {
      (void)store.Remove(path);
      DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms);
      return std::move(shared).error();
    }
  }
  Journal journal(store, path, st);
  StepEnv env{ctx.host, pod.get(), 0, &ctx.ipam, rdma, pod_rdma.get()};
  env.host_vf = target.vfs.get();
  SmcHandles smc;

  // 4. Apply, journaled; any failure rolls everything back.
  auto apply = [&]() -> Result<json> {
    // VF settings go through the PF before the VF moves, and come off last.
    if (vf_step) RETURN_IF_ERROR(journal.Run({*vf_step}, env));
    std::vector<ipam::IpConfig> ips;
    if (cfg.addresses == conf::AddressMode::kInherit) {
      ips = ipam::Inherit(st.origin.addrs, st.origin.routes);
    } else if (cfg.addresses == conf::AddressMode::kIpam) {
      ASSIGN_OR_RETURN(json r, RunIpamAdd(ctx, journal, env));
      ASSIGN_OR_RETURN(ips, IpsFromIpam(r));
    }
    // The link's arrival, its configuration and its RDMA device in one
    // state write: the pod-side steps are planned before the link has its
    // pod-side index (0 for now), which Journal::Run fills in once the move
    // or the child's creation gives it.
    std::vector<Step> link_steps;
    if (child_step)
      link_steps.emplace_back(*child_step);
    else
      link_steps.emplace_back(StepMove{pod_name});
    // Drivers differ in whether a MAC set through the PF reaches the VF's
    // netdev (mlx5 does not until the VF driver reloads): set it there too,
    // while the link is still down from the move.
    if (vf && cfg.mac) link_steps.emplace_back(StepMac{*cfg.mac});
    for (Step& s : PlanPodConfig(cfg, 0, table, ips)) link_steps.push_back(std::move(s));
    const bool exclusive = rdma_plan.mode == netlink::NetnsMode::kExclusive;
    if (rdma_plan.pair) {
      st.rdma_device = rdma_plan.pair->device.name;
      if (exclusive) link_steps.emplace_back(StepRdmaMove{st.rdma_device});
    } else if (!rdma_plan.soft_name.empty()) {
      // Soft-RoCE dies when its netdev changes netns, so it is made on the
      // pod side once the link is there; in exclusive mode it registers on
      // the node and moves in.
      st.rdma_device = rdma_plan.soft_name;
      link_steps.emplace_back(StepSoftRdma{st.rdma_device});
      if (exclusive) link_steps.emplace_back(StepRdmaMove{st.rdma_device});
    }
    if (!st.rdma_device.empty()) st.rdma_mode = netlink::NetnsModeName(rdma_plan.mode);
    RETURN_IF_ERROR(journal.Run(link_steps, env));
    if (cfg.smcr_wanted)
      RETURN_IF_ERROR(ApplySmcr(ctx, SmcrTarget{pod_name, device.mac, true, nullptr}, journal, env, smc));
    ASSIGN_OR_RETURN(auto link, pod->FindLinkByIndex(env.pod_index));
    if (!link) return Error(Code::kKernel, pod_name + " vanished from the pod during ADD");
    json result = BuildResult(ctx, st, *link, ips, vf ? vf->sriov.pci : std::string());
    st.complete = true;
    st.result = result;
    RETURN_IF_ERROR(journal.Persist());
    return result;
  };

  Result<json> result = apply();
  if (result.ok()) {
    base::Log::Info(
        std::string(cfg.child() ? "attached a " + std::string(conf::ModeName(cfg.mode)) + " child of "
                    : vf ? "attached VF " + vf->sriov.pci + " (vf " + std::to_string(vf->sriov.vf) + " of " +
                               vf->pf.name + "), netdev "
                         : "attached ") +
        device.name + " as " + pod_name + " (table " + std::to_string(table) +
        (st.rdma_device.empty() ? std::string() : ", RDMA device " + st.rdma_device + " " + st.rdma_mode) +
        ")");
    return result;
  }
  Error err = std::move(result).error();
  base::Log::Error("ADD failed: " + err.msg + (err.details.empty() ? "" : " (" + err.details + ")") +
                   "; rolling back");
  Error back = RollBack(err, st, env, journal, store, path);
  if (back.code != Code::kRollbackIncomplete) {
    if (claim) claim->Remove();
    if (cfg.child()) DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms);
  }
  return back;
}

}  // namespace cni

// ADD, one pipeline for every mode: the driver finds and plans, the pipeline holds the device (claim or
// share: only here), journals and applies the plan, builds the result, and on failure undoes it all.
#include "cni/command/add.h"

#include <algorithm>

#include "base/escape.h"
#include "base/log.h"
#include "base/phase.h"
#include "cni/command/result.h"
#include "cni/command/stale.h"
#include "cni/core/context.h"
#include "cni/driver/driver.h"
#include "cni/driver/plan.h"
#include "cni/journal/journal.h"
#include "cni/state/claim.h"
#include "cni/state/device_info.h"
#include "cni/state/state.h"
#include "conf/names.h"
#include "conf/version.h"
#include "ipam/inherit.h"
#include "ipam/ipam_result.h"
#include "ipam/negotiate.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

namespace {

// Journals the IPAM step (unless `journaled` by the share's state write) and runs IPAM ADD. A plugin that
// answered an error is owed one DEL, now, and no more: a refused config never blocks the rollback or a DEL.
Result<json> RunIpamAdd(Context& ctx, Journal& journal, StepEnv& env, const StepIpam& step, bool journaled) {
  RETURN_IF_ERROR(journaled ? journal.RunWritten(1, env) : journal.Run({step}, env));
  auto r = ctx.ipam.Run(step.type, "ADD", step.config.dump());
  if (!r.ok() && r.error().plugin_answered) {
    if (auto del = ctx.ipam.Run(step.type, "DEL", step.config.dump()); !del.ok())
      base::Log::Warn("ipam " + step.type + " ADD failed and its DEL failed too (" + del.error().msg +
                      "); nothing more is owed to it");
    journal.DropLast();
  } else if (!r.ok() && r.error().changed_nothing) {
    journal.DropLast();
  }
  return r;
}

// After a failed ADD: undoes the journal and removes the state, or keeps it for DEL (code 102).
Error RollBack(Error err, AttachmentState& st, StepEnv& env, Journal& journal, const StateStore& store,
               const std::string& path) {
  std::vector<Error> undo = UndoSteps(st, env);
  if (!undo.empty()) {
    (void)journal.Persist();
    Error joined = JoinErrors(undo, "rollback");
    return Error(Code::kRollbackIncomplete,
                 err.msg + "; rollback incomplete: " + joined.msg + " (state kept in " + path + " for DEL)",
                 joined.details);
  }
  (void)store.Remove(path);
  return err;
}

// The addresses the pod asked for (CNI_ARGS IP, runtimeConfig.ips) where erdma-cni, not an IPAM plugin, gives
// the addresses: they must be the device's own (addresses "inherit"); with none given, none can be honoured.
Status CheckRequestedIps(const Context& ctx, const Plan& plan) {
  if (!ctx.requests || ctx.requests->ips.empty() || plan.addresses == conf::AddressMode::kIpam)
    return base::Ok();
  const conf::Config& cfg = ctx.cfg;
  const std::string& key = ctx.requests->ips_key;
  if (plan.addresses == conf::AddressMode::kNone)
    return Error(Code::kInvalidConfig, key + ": this attachment gives the pod no address (mode " +
                                           std::string(cfg.mode->name) + "); remove the request");
  const auto have = ipam::Inherit(plan.state.origin.addrs, plan.state.origin.routes);
  std::string listed;
  for (const auto& ip : have) listed += (listed.empty() ? "" : ", ") + ip.address.ToString();
  for (const conf::PodRequests::Ip& want : ctx.requests->ips) {
    const bool found = std::any_of(have.begin(), have.end(), [&](const ipam::IpConfig& ip) {
      return ip.address.addr == want.ip.addr && (!want.exact || ip.address.len == want.ip.len);
    });
    if (!found)
      return Error(Code::kInvalidConfig,
                   key + ": " + (want.exact ? want.ip.ToString() : want.ip.addr.ToString()) +
                       " is not an address of " + plan.state.origin.name + " (" +
                       (listed.empty() ? "it has none" : listed) +
                       "), and addresses \"inherit\" gives the pod the device's own; request one of them, or "
                       "set addresses \"ipam\" with an IPAM plugin that takes requests");
  }
  return base::Ok();
}

// The device the driver finds on the node for this attachment. Changes nothing.
Result<Target> FindTarget(Context& ctx, const StateStore& store, const Driver& driver,
                          const RdmaAccess& rdma) {
  const conf::Config& cfg = ctx.cfg;
  auto found = driver.Find(ctx, store, rdma);
  if (!found.ok() && found.error().code == Code::kTryAgainLater &&
      cfg.device.by == conf::DeviceSelector::By::kDeviceId && !cfg.device.via.empty()) {
    Error e = std::move(found).error();
    e.msg +=
        "; " + cfg.device.Describe() +
        ": the device plugin gave this pod a device that another pod holds: let the pods share it (mode " +
        conf::ModeList(cfg.modes, [](const conf::ModeSpec& s) { return s.child; }) +
        ", or rdma.netnsMode \"shared\"), or have the device plugin allocate whole devices and choose "
        "from them";
    return e;
  }
  ASSIGN_OR_RETURN(Target target, std::move(found));
  // The journal and the claim name the device: one whose name no DEL could read back is not taken.
  if (target.device && !conf::IsValidIfName(target.device->name))
    return Error(
        Code::kInvalidConfig,
        target.selection + ": the node device " + base::EscapeForDisplay(target.device->name) +
            " has a name erdma-cni cannot record (control characters, whitespace, '/' or ':'); rename "
            "it on the node (ip link set dev <name> name <new>) or select another device");
  return target;
}

// In the pod: our interface's name is free, and the policy table ours takes.
Result<uint32_t> PodTable(const Context& ctx, netlink::Kernel& pod, const std::string& pod_name) {
  ASSIGN_OR_RETURN(auto clash, pod.FindLink(pod_name));
  if (clash)
    return Error(Code::kInvalidConfig, (ctx.cfg.chained() ? "ifName" : "CNI_IFNAME") +
                                           std::string(": the pod already has an interface named ") +
                                           pod_name + "; choose another name");
  ASSIGN_OR_RETURN(auto pod_rules, pod.ListRules());
  ASSIGN_OR_RETURN(auto pod_routes, pod.ListRoutes(0));
  return ChooseTable(ctx.cfg.routing, pod_rules, pod_routes);
}

// What the pipeline holds for an attachment: released when ADD gives up (Release), or kept for DEL (Keep).
class HoldGuard {
 public:
  HoldGuard(Context& ctx, const StateStore& store, std::string path)
      : ctx_(ctx), store_(store), path_(std::move(path)) {}
  HoldGuard(const HoldGuard&) = delete;
  HoldGuard& operator=(const HoldGuard&) = delete;
  ~HoldGuard() {
    if (!kept_) Release();
  }

  // The one place a device is taken, under its claim lock: code 11 while a live attachment owns it or other
  // pods' children share it (a provably dead holder's DEL is finished here); re-reads the device.
  Status Claim(Target& t) {
    ASSIGN_OR_RETURN(claim_, DeviceClaim::Lock(store_.DevicesDir(), t.hold_name, ctx_.lock_wait_ms));
    std::optional<ClaimOwner> prior = claim_->Owner();
    LockedClaim ours{*claim_, t.hold_name};
    if (prior && ClaimIsLive(*prior)) {
      ASSIGN_OR_RETURN(bool gone, RecoverStale(ctx_, store_.DataDir(), *prior, &ours));
      if (!gone) return InUseError(t.selection, *prior);
      prior = claim_->Owner();  // cleared by the recovery
    }
    fresh_ = !prior;
    auto sharers = LiveShares(store_.ChildrenDir(), t.hold_name);
    if (!sharers.empty()) {
      std::vector<ClaimOwner> live;
      for (const ClaimOwner& s : sharers) {
        auto gone = RecoverStale(ctx_, store_.DataDir(), s, &ours);
        if (!gone.ok() || !*gone) live.push_back(s);
      }
      if (!live.empty()) return SharedError(t.selection, t.hold_name, live);
      (void)LiveShares(store_.ChildrenDir(), t.hold_name);  // tidies the parent's directory
    }
    if (!t.device) return base::Ok();
    // Another ADD may have taken it between the driver's lookup and the lock.
    ASSIGN_OR_RETURN(auto locked, ctx_.host.FindLinkByIndex(t.device->index));
    if (!locked || locked->name != t.device->name)
      return Error(Code::kTryAgainLater, t.selection + " was taken by another pod while we waited for it");
    t.device = *locked;
    return base::Ok();
  }

  // A child's parent is shared, not claimed: code 11 while an attachment that took the whole parent may live;
  // a provably dead one's DEL is finished under the parent's claim lock. ShareParent checks again.
  Status FreeParent(Target& t) {
    ASSIGN_OR_RETURN(auto lock, DeviceClaim::Lock(store_.DevicesDir(), t.hold_name, ctx_.lock_wait_ms));
    if (std::optional<ClaimOwner> prior = lock.Owner(); prior && ClaimIsLive(*prior)) {
      LockedClaim ours{lock, t.hold_name};
      ASSIGN_OR_RETURN(bool gone, RecoverStale(ctx_, store_.DataDir(), *prior, &ours));
      if (!gone) return InUseError(t.selection, *prior);
    }
    if (auto owner = lock.Owner(); !owner || !ClaimIsLive(*owner)) lock.Remove();
    // The recovery gave the parent its node name and addresses back.
    ASSIGN_OR_RETURN(auto now, ctx_.host.FindLinkByIndex(t.device->index));
    if (!now || now->name != t.hold_name)
      return Error(Code::kTryAgainLater, t.selection + " changed while we waited for it");
    t.device = *now;
    return base::Ok();
  }

  // Writes who holds the device: the claim's owner, or a child's state and then (a share without one is
  // stale) its share.
  Status Own(const Target& t, const Plan& plan) {
    const conf::Config& cfg = ctx_.cfg;
    const std::string mac = t.device ? t.device->mac : "";
    if (claim_) {
      std::vector<json> kept;
      for (const Step& s : plan.claim_steps) kept.push_back(StepToJson(s));
      Status s =
          claim_->SetOwner(ClaimOwner{cfg.name, ctx_.env.container_id, ctx_.env.ifname, path_, t.hold_name,
                                      mac, t.pci, std::move(kept), t.device && !t.device->up});
      owned_ = s.ok();  // from here the rollback's outcome decides
      return s;
    }
    if (t.hold != Hold::kShare) return base::Ok();
    shared_ = true;
    RETURN_IF_ERROR(store_.Save(path_, plan.state));
    return ShareParent(
        store_.DevicesDir(), store_.ChildrenDir(), t.hold_name,
        ClaimOwner{cfg.name, ctx_.env.container_id, ctx_.env.ifname, path_, t.hold_name, mac, "", {}},
        ctx_.lock_wait_ms);
  }

  void Keep() { kept_ = true; }
  void Release() {
    kept_ = true;
    // A claim with an earlier (stale) owner is ours to remove only once Own or the rollback made it so.
    if (claim_ && (fresh_ || owned_)) claim_->Remove();
    if (shared_) {
      (void)store_.Remove(path_);
      DropShares(store_.DevicesDir(), store_.ChildrenDir(), path_, ctx_.lock_wait_ms);
    }
  }

 private:
  Context& ctx_;
  const StateStore& store_;
  std::string path_;
  std::optional<DeviceClaim> claim_;
  bool fresh_ = false, owned_ = false, shared_ = false, kept_ = false;
};

json BuildResult(const Context& ctx, const Plan& plan, const AttachmentState& st, const std::string& mac,
                 const std::vector<ipam::IpConfig>& ips, const std::string& pci) {
  ResultInterface iface{st.pod_if_name, mac, ctx.env.netns, std::nullopt, st.rdma_device, pci};
  if (ctx.cfg.mtu && plan.link_steps) iface.mtu = *ctx.cfg.mtu;
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
  return AppendToResult(ctx.cfg.prev_result, ctx.cfg.cni_version, iface, ips, routes);
}

// The pod-side handles of the journal's steps; they live as long as its env.
struct PodHandles {
  std::unique_ptr<netlink::Rdma> rdma;
  std::unique_ptr<netlink::Sysctl> sysctl;
  std::unique_ptr<netlink::Smc> smc;
};

// Reads what SMC-R depends on in the pod and plans its steps, before anything changes.
Result<std::vector<Step>> PlanPodSmcr(Context& ctx, const SmcrTarget& target, PodHandles& h,
                                      const StateStore& store, const std::string& path, StepEnv& env) {
  ASSIGN_OR_RETURN(h.sysctl, ctx.netns.OpenSysctl(ctx.env.netns));
  auto smc = ctx.netns.OpenSmc(ctx.env.netns);
  std::optional<Error> smc_error;
  if (smc.ok())
    h.smc = std::move(smc).value();
  else
    smc_error = std::move(smc).error();
  env.pod_sysctl = h.sysctl.get();
  env.pod_smc = h.smc.get();
  env.ueid_in_use = [store, path](const std::string& ueid) { return UeidUsedElsewhere(store, path, ueid); };
  std::unique_ptr<netlink::Smc> node_smc = target.node_port_check ? OrNull(ctx.netns.OpenSmc("")) : nullptr;
  ASSIGN_OR_RETURN(auto facts, ReadSmcr(ctx.cfg, target, *h.sysctl, h.smc.get(),
                                        smc_error ? &*smc_error : nullptr, node_smc.get(), env.ueid_in_use));
  return PlanSmcr(ctx.cfg, target, facts);
}

}  // namespace

Status RefuseExisting(const Context& ctx, const StateStore& store) {
  const std::string& cid = ctx.env.container_id;
  const std::string& ifname = ctx.env.ifname;
  auto refuse = [&](const Result<std::optional<AttachmentState>>& existing, const std::string& p) -> Status {
    if (!existing.ok())
      return Error(Code::kState,
                   existing.error().msg + "; refusing to reuse the attachment: run DEL for it first");
    // A member named after an attachment the pod already has: no retry frees the name.
    if (*existing && ctx.member_of)
      return Error(Code::kInvalidConfig,
                   (ctx.cfg.chained() ? "ifName" : "CNI_IFNAME") + std::string(" \"") + *ctx.member_of +
                       "\": this attachment's interface " + ifname + " is already attachment " + cid + "/" +
                       ifname + " of network " + ctx.cfg.name + " (" + p +
                       "); choose a name whose numbered successors are free in the pod");
    if (*existing)
      return Error(Code::kTryAgainLater,
                   "attachment " + cid + "/" + ifname + " already exists (" + p + "); run DEL for it first");
    return base::Ok();
  };
  // A group's file (not a member's: its key may be its group's), then a state under any of its names.
  if (!ctx.member_of) {
    const std::string group = store.GroupPathFor(cid, ifname);
    RETURN_IF_ERROR(refuse(store.Load(group), group));
  }
  std::string path;
  auto existing = store.LoadLocated(cid, ifname, &path);
  return refuse(existing, path);
}

Result<json> Add(Context& ctx) {
  const conf::Config& cfg = ctx.cfg;
  // The drivers finish a dead holder's DEL through this (they sit below the commands).
  if (ctx.recover_stale_claim == nullptr) ctx.recover_stale_claim = RecoverClaim;
  // CNI_NETNS first: bad input, refused before anything is created.
  std::unique_ptr<netlink::Kernel> pod_owned;
  ASSIGN_OR_RETURN(netlink::Kernel * pod, OpenNetns(ctx, ctx.env.netns, pod_owned));
  StateStore store(cfg.data_dir, cfg.name);
  RETURN_IF_ERROR(store.Prepare());
  const std::string path = store.PathFor(ctx.env.container_id, ctx.env.ifname);
  const std::string pod_name = PodIfName(ctx);
  RETURN_IF_ERROR(RefuseExisting(ctx, store));

  // 1. The device, on the node, held for us (RDMA netlink is optional).
  const Driver& driver = cfg.mode->driver();
  std::unique_ptr<netlink::Rdma> rdma_owned;
  const auto host_rdma = NodeRdma(ctx, rdma_owned);
  const RdmaAccess rdma{host_rdma.ok() ? *host_rdma : nullptr, host_rdma.ok() ? nullptr : &host_rdma.error()};
  ASSIGN_OR_RETURN(Target target, FindTarget(ctx, store, driver, rdma));
  HoldGuard hold(ctx, store, path);
  if (target.hold == Hold::kClaim) RETURN_IF_ERROR(hold.Claim(target));
  if (target.hold == Hold::kShare) RETURN_IF_ERROR(hold.FreeParent(target));

  // 2. The pod: our name is free; the policy table.
  uint32_t table = 0;
  if (target.enters_pod) {
    ASSIGN_OR_RETURN(table, PodTable(ctx, *pod, pod_name));
  }

  // 3. What the device looks like now, and the plan.
  RETURN_IF_ERROR(driver.Resolve(ctx, rdma, target));
  ASSIGN_OR_RETURN(Plan plan, driver.MakePlan(ctx, target, pod_name, table));
  RETURN_IF_ERROR(CheckRequestedIps(ctx, plan));
  json passed = conf::ConvertResult(
      cfg.prev_result.is_null() ? json{{"cniVersion", cfg.cni_version}} : cfg.prev_result, cfg.cni_version);
  if (plan.result_only) return passed;
  PodHandles handles;
  if (plan.link_steps && target.rdma.active()) {
    ASSIGN_OR_RETURN(handles.rdma, ctx.netns.OpenRdma(ctx.env.netns));
  }
  Journal journal(store, path, plan.state);
  StepEnv env{.host = ctx.host,
              .pod = pod,
              .ipam = &ctx.ipam,
              .host_rdma = rdma.host,
              .pod_rdma = handles.rdma.get()};
  env.host_vf = target.vfs.get();
  std::vector<Step> smcr_steps;
  if (plan.smcr) {
    ASSIGN_OR_RETURN(smcr_steps, PlanPodSmcr(ctx, *plan.smcr, handles, store, path, env));
  }
  AttachmentState& st = plan.state;
  // How a later ADD tells this pod is gone, should its DEL be lost.
  st.netns_id = ctx.netns.Identify(*pod);
  // A child's share writes the state before it exists (Own); when IPAM is the first step, it enters the
  // journal in that write. An IPAM DEL of what was never added succeeds, so the early entry owes nothing.
  std::optional<StepIpam> ipam_step;
  if (plan.addresses == conf::AddressMode::kIpam)
    ipam_step = StepIpam{cfg.ipam_type, ipam::DelegateConfig(cfg)};
  const bool ipam_journaled = ipam_step && plan.node_steps.empty() && target.hold == Hold::kShare;
  if (ipam_journaled) st.steps.push_back(*ipam_step);
  RETURN_IF_ERROR(hold.Own(target, plan));

  // 4. Apply, journaled; any failure rolls everything back.
  auto apply = [&]() -> Result<json> {
    // The node's part first (VF settings before the VF moves); it comes off last.
    if (!plan.node_steps.empty()) RETURN_IF_ERROR(journal.Run(plan.node_steps, env));
    std::vector<ipam::IpConfig> ips;
    if (plan.addresses == conf::AddressMode::kInherit) {
      ips = ipam::Inherit(st.origin.addrs, st.origin.routes);
    } else if (ipam_step) {
      ASSIGN_OR_RETURN(json r, RunIpamAdd(ctx, journal, env, *ipam_step, ipam_journaled));
      ASSIGN_OR_RETURN(ips, ipam::AddressesOf(r));
    }
    // The link's steps in one state write; Journal::Run binds the pod-side index once the link has one.
    if (plan.link_steps) {
      st.rdma_device = plan.rdma_device;
      st.rdma_mode = plan.rdma_mode;
      RETURN_IF_ERROR(journal.Run(plan.link_steps(ips), env));
    }
    if (plan.smcr) {
      base::Log::Info("SMC-R for " + plan.smcr->ifname + ": " + std::to_string(smcr_steps.size()) +
                      " step(s)");
      RETURN_IF_ERROR(journal.Run(smcr_steps, env));
    }
    json result = passed;
    if (!plan.pass_through) {
      std::string mac = plan.result_mac;
      // The move or child step's lookup read the link's MAC (or a mac step set it).
      if (plan.link_steps) mac = env.pod_mac;
      base::phase::Begin("result");
      result = BuildResult(ctx, plan, st, mac, ips, target.pci);
      // What a group names in its device-info file; an attachment of its own writes the file here.
      ctx.attached_pci = target.pci;
      ctx.attached_rdma = st.rdma_device;
      std::optional<std::string> info =
          ctx.member_of || target.pci.empty() ? std::nullopt : DeviceInfoPath(cfg);
      if (info)
        RETURN_IF_ERROR(WriteDeviceInfo(st.device_info, {*info, DeviceInfoText(target.pci, st.rdma_device)},
                                        [&journal] { return journal.Persist(); }));
    }
    st.complete = true;
    st.result = result;
    RETURN_IF_ERROR(journal.Persist());
    return result;
  };

  base::phase::Begin("steps");
  Result<json> result = apply();
  base::phase::Begin("finish");
  if (result.ok()) {
    hold.Keep();
    base::Log::Info(plan.log_line);
    return result;
  }
  Error err = std::move(result).error();
  base::Log::Error("ADD failed: " + err.msg + (err.details.empty() ? "" : " (" + err.details + ")") +
                   "; rolling back");
  Error back = RollBack(err, st, env, journal, store, path);
  if (back.code == Code::kRollbackIncomplete)
    hold.Keep();
  else
    hold.Release();
  return back;
}

}  // namespace cni

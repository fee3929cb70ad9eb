// DEL: finish whatever the journal says was done, in reverse. Idempotent: no state means nothing to do; a
// gone netns means the kernel already took the pod side away.
#include "cni/command/del.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "base/file.h"
#include "base/log.h"
#include "base/phase.h"
#include "cni/command/group.h"
#include "cni/command/stale.h"
#include "cni/core/context.h"
#include "cni/driver/driver.h"
#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"
#include "ipam/negotiate.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

// Whether `pod` holds the link the journal moved (its name and MAC) or made (a child of its kind).
bool HoldsOurLink(const AttachmentState& st, netlink::Kernel& pod) {
  const StepMac* mac = FindStep<StepMac>(st.steps);
  for (const Step& s : st.steps) {
    const auto* move = std::get_if<StepMove>(&s);
    const auto* child = std::get_if<StepChild>(&s);
    if (!move && !child) continue;
    auto link = pod.FindLink(move ? move->pod_name : child->spec.name);
    if (!link.ok() || !*link) return false;
    if (child) return (*link)->kind == child->spec.kind;
    return st.origin.mac.empty() || (*link)->mac == st.origin.mac || (mac && (*link)->mac == mac->mac);
  }
  return false;
}

// The node's VF handle into `vfs` when the journal `st` set VF settings through a PF.
Status OpenVfFor(Context& ctx, const AttachmentState& st, std::unique_ptr<netlink::Vf>& vfs) {
  if (!FindStep<StepVf>(st.steps)) return base::Ok();
  auto v = ctx.netns.OpenVf();
  if (!v.ok()) return std::move(v).error().WithContext("DEL needs rtnetlink to restore VF settings");
  vfs = std::move(v).value();
  return base::Ok();
}

// The pod netns, or null when gone, and its path. CNI_NETNS may be empty, gone, or another than ADD's: of it
// and the recorded one, the one holding our link is used, so that the device is never left where no DEL
// comes again. Never the node's own. `owned` keeps the handle alive.
netlink::Kernel* OpenPod(Context& ctx, const AttachmentState& st, std::string& path,
                         std::unique_ptr<netlink::Kernel>& owned) {
  std::vector<std::string> candidates;
  if (!ctx.env.netns.empty()) candidates.push_back(ctx.env.netns);
  if (!st.netns.empty() && st.netns != ctx.env.netns) candidates.push_back(st.netns);
  path = candidates.empty() ? std::string() : candidates.front();
  struct Live {
    std::string path;
    netlink::Kernel* pod;
    std::unique_ptr<netlink::Kernel> owned;
  };
  std::vector<Live> live;
  for (const std::string& c : candidates) {
    std::unique_ptr<netlink::Kernel> mine;
    auto pod = OpenNetns(ctx, c, mine);
    if (pod.ok()) {
      live.push_back({c, *pod, std::move(mine)});
      continue;
    }
    base::Log::Info("pod netns " + c + " cannot be used (" + pod.error().msg + ")");
  }
  if (live.empty()) {
    if (!candidates.empty()) base::Log::Info("the pod netns is gone; the kernel returned its devices");
    return nullptr;
  }
  // With one netns left it is the one, whatever it holds: no question to ask.
  auto it = live.size() == 1 ? live.begin() : std::find_if(live.begin(), live.end(), [&](const Live& l) {
    return HoldsOurLink(st, *l.pod);
  });
  Live& pick = it == live.end() ? live.front() : *it;
  if (pick.path != candidates.front())
    base::Log::Info("undoing in the netns recorded at ADD, " + pick.path + ", not in CNI_NETNS " +
                    candidates.front() + ": it holds " + st.pod_if_name + " or is the only one left");
  path = pick.path;
  owned = std::move(pick.owned);
  return pick.pod;
}

}  // namespace

Status DeleteAttachment(Context& ctx, const StateStore& store, const std::string& path, AttachmentState& st,
                        const LockedClaim* caller_lock) {
  if (st.group) return DeleteGroup(ctx, store, path, st);
  // Mode none moves no device and holds no claim.
  std::optional<DeviceClaim> locked;
  DeviceClaim* claim = nullptr;
  if (!st.origin.name.empty()) {
    if (caller_lock && caller_lock->device == st.origin.name) {
      claim = &caller_lock->claim;
    } else {
      ASSIGN_OR_RETURN(locked, DeviceClaim::Lock(store.DevicesDir(), st.origin.name, ctx.lock_wait_ms));
      claim = &*locked;
    }
    // The state was read before the lock: another DEL of it may have finished meanwhile, the device moved on.
    if (!base::PathExists(path)) {
      if (!claim->Owner() && locked) locked->Remove();  // the caller's locked claim stays its own
      base::Log::Info("another DEL of this attachment finished while we waited for " + st.origin.name);
      return base::Ok();
    }
    // ADD names the attachment in the claim before it journals a step: a state whose device's claim names
    // another attachment (or another device) is not what ADD wrote, and the device is not its to move.
    auto owner = claim->Owner();
    if (!owner || owner->state_path != path || owner->device != st.origin.name ||
        owner->mac != st.origin.mac) {
      if (!owner && locked) locked->Remove();  // our Lock made an empty file, or the claim is unreadable
      return Error(Code::kState,
                   "state file " + path + " says " + st.origin.name + " (mac " + st.origin.mac +
                       ") is this attachment's, but the device's claim " + store.DevicesDir() + "/" +
                       st.origin.name +
                       (owner ? " names container " + owner->container_id : " names nobody") +
                       "; the device is left alone: remove the state file if no pod uses this attachment",
                   "", kHostileState);
    }
  }
  std::string netns_path;
  std::unique_ptr<netlink::Kernel> pod_owned;
  netlink::Kernel* const pod = OpenPod(ctx, st, netns_path, pod_owned);
  std::unique_ptr<netlink::Rdma> host_rdma_owned, pod_rdma;
  netlink::Rdma* host_rdma = nullptr;
  if (FindStep<StepRdmaMove>(st.steps) || FindStep<StepSoftRdma>(st.steps)) {
    auto h = NodeRdma(ctx, host_rdma_owned);
    if (!h.ok()) return Error(h.error()).WithContext("DEL needs RDMA netlink to return " + st.rdma_device);
    host_rdma = *h;
    if (pod) pod_rdma = OrNull(ctx.netns.OpenRdma(netns_path));
  }
  StepEnv env{
      .host = ctx.host, .pod = pod, .ipam = &ctx.ipam, .host_rdma = host_rdma, .pod_rdma = pod_rdma.get()};
  // SMC-R: the pod's sysctls and pnet table (gone with the netns, if it is), the node-wide UEID table.
  std::unique_ptr<netlink::Sysctl> pod_sysctl;
  std::unique_ptr<netlink::Smc> pod_smc, host_smc;
  const bool has_ueid = FindStep<StepUeid>(st.steps);
  if (pod && FindStep<StepSysctl>(st.steps)) pod_sysctl = OrNull(ctx.netns.OpenSysctl(netns_path));
  if (pod && (FindStep<StepPnet>(st.steps) || has_ueid)) pod_smc = OrNull(ctx.netns.OpenSmc(netns_path));
  if (has_ueid) {
    host_smc = OrNull(ctx.netns.OpenSmc(""));
    env.ueid_in_use = [&store, &path](const std::string& ueid) {
      return UeidUsedElsewhere(store, path, ueid);
    };
  }
  env.pod_sysctl = pod_sysctl.get();
  env.pod_smc = pod_smc.get();
  env.host_smc = host_smc.get();
  std::unique_ptr<netlink::Vf> host_vf;
  RETURN_IF_ERROR(OpenVfFor(ctx, st, host_vf));
  env.host_vf = host_vf.get();
  base::phase::Begin("steps");
  std::vector<Error> errors = UndoSteps(st, env);
  if (!errors.empty()) {
    Code code = Code::kDelIncomplete;
    bool ipam = false;
    for (const auto& e : errors) {
      if (e.code == Code::kNameTaken) code = Code::kNameTaken;
      if (e.code == Code::kIpam) ipam = true;
    }
    Error joined = JoinErrors(errors, "DEL of " + st.container_id + "/" + st.if_name);
    joined.code = code;
    joined.msg += " (state kept in " + path + "; the runtime's next DEL retries what is left; if it keeps " +
                  "failing, `erdma-cni clear --container " + st.container_id + (ipam ? " --skip-ipam" : "") +
                  "` finishes it by hand" + (ipam ? ", the IPAM plugin's lease left to its own tools" : "") +
                  ")";
    return joined;
  }
  base::phase::Begin("finish");
  RETURN_IF_ERROR(store.Remove(path));
  if (locked)
    locked->Remove();
  else if (claim)  // the caller's: it goes on holding the device
    claim->Clear();
  else  // a child's share of its parent, if this was one
    DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms,
               caller_lock ? caller_lock->device : "");
  if (const StepChild* child = FindStep<StepChild>(st.steps))
    base::Log::Info("detached: " + child->spec.kind + " child " + child->spec.name + " deleted; its parent " +
                    child->parent + " was not touched");
  else if (st.origin.name.empty())
    base::Log::Info("detached: nothing of the node had moved");
  else if (auto home = ctx.host.FindLink(st.origin.name); home.ok() && *home)
    base::Log::Info("detached: " + st.origin.name + " is back on the node");
  else  // a virtual device dies with its netns (the link step said so)
    base::Log::Info("detached: " + st.origin.name + " did not come back (gone with the pod netns)");
  return base::Ok();
}

namespace {

Status RemoveOrphanRules(netlink::Kernel& pod, uint32_t priority) {
  ASSIGN_OR_RETURN(auto rules, pod.ListRules());
  ASSIGN_OR_RETURN(auto routes, pod.ListRoutes(0));
  std::set<uint32_t> used;
  for (const auto& r : routes) used.insert(r.table);
  for (const auto& rule : rules) {
    if (rule.priority != priority || !rule.src || rule.table == netlink::kTableMain ||
        rule.table == netlink::kTableLocal || rule.table == netlink::kTableDefault || used.count(rule.table))
      continue;
    Status s = pod.DelRule(rule);
    if (!s.ok() && s.error().sys_errno != ENOENT) return s;
    base::Log::Info("removed rule from " + rule.src->ToString() + " lookup " + std::to_string(rule.table) +
                    ": its table is empty");
  }
  return base::Ok();
}

// DEL without a readable state: the netdev `owner` claims back on the node under its name and MAC (from the
// pod, also by `pod_mac`), unless it never left. Its addresses and routes stay the node agent's to restore.
Status MoveClaimedHome(Context& ctx, const ClaimOwner& owner, const std::string& pod_name, StepEnv& env,
                       const std::string& pod_mac) {
  // Claimed by its PCI address without a MAC (a VF bound to vfio-pci): no netdev moved.
  if (owner.mac.empty() && owner.device == owner.pci) return base::Ok();
  DeviceOrigin o;
  o.name = owner.device;
  o.mac = owner.mac;
  o.up = !owner.down;  // its addresses are the node agent's to restore
  // An ADD that died before it moved anything: the device never left.
  if (auto at_home = ctx.host.FindLink(o.name); at_home.ok() && *at_home && (*at_home)->mac == o.mac)
    return base::Ok();
  RETURN_IF_ERROR(MoveHome(o, pod_name, env, pod_mac));
  base::Log::Warn("returned " + o.name + " to the node without its addresses and routes (only the " +
                  "state knew them); the node agent or an operator must restore them");
  return base::Ok();
}

// The node steps the claim kept (Plan::claim_steps), undone as DEL does; one that does not read back stays.
Status UndoClaimSteps(Context& ctx, const ClaimOwner& owner, StepEnv& env) {
  AttachmentState kept;
  for (const nlohmann::json& j : owner.steps) {
    auto step = StepFromJson(j);
    if (step.ok() && ValidateStep(*step).ok())
      kept.steps.push_back(std::move(*step));
    else
      base::Log::Warn("a step the claim of " + owner.device + " keeps cannot be read; what it did stays");
  }
  if (kept.steps.empty()) return base::Ok();
  std::unique_ptr<netlink::Vf> vfs;
  RETURN_IF_ERROR(OpenVfFor(ctx, kept, vfs));
  env.host_vf = vfs.get();
  std::vector<Error> errors = UndoSteps(kept, env);
  env.host_vf = nullptr;
  if (errors.empty()) return base::Ok();
  return JoinErrors(errors, "the steps the claim of " + owner.device + " keeps");
}

// DEL with a state file that cannot be read, or missing while a claim names it: undoes what the kernel, the
// claim and the config show, so that one bad file holds nothing hostage.
Status DelWithoutReadableState(Context& ctx, const StateStore& store, const std::string& path,
                               const Error& why) {
  base::Log::Warn("state " + path + " cannot be used (" + why.msg +
                  "); DEL works from the device claim, the config and what the kernel shows");
  const std::string pod_name = PodIfName(ctx);
  std::unique_ptr<netlink::Kernel> pod;
  if (!ctx.env.netns.empty()) pod = OrNull(ctx.netns.Open(ctx.env.netns));
  StepEnv env{.host = ctx.host, .pod = pod.get()};
  std::vector<Error> errors;
  auto keep = [&](Status s) {
    if (!s.ok()) errors.push_back(std::move(s).error());
  };

  const Driver& driver = ctx.cfg.mode->driver();
  std::optional<ClaimOwner> owner = ClaimOf(store.DevicesDir(), path);
  std::optional<DeviceClaim> claim;
  if (owner) {
    ASSIGN_OR_RETURN(claim, DeviceClaim::Lock(store.DevicesDir(), owner->device, ctx.lock_wait_ms));
    // Another pod's ADD may have taken the device over since (our owner was stale).
    auto now = claim->Owner();
    if (!now || now->state_path != path) {
      base::Log::Info(owner->device + " is no longer claimed by this attachment" +
                      (now ? " but by container " + now->container_id + "; leaving it alone" : ""));
      if (!now) claim->Remove();  // our Lock made an empty file
      owner.reset();
    }
  }
  if (owner) {
    // The device home, then what the claim kept; the claim goes only when all is back, for the next DEL.
    Status home = MoveClaimedHome(ctx, *owner, pod_name, env, PodMac(ctx).value_or(""));
    if (home.ok()) home = UndoClaimSteps(ctx, *owner, env);
    if (home.ok()) claim->Remove();
    keep(std::move(home));
  }
  // What only the mode knows (a child: its link in the pod, its share).
  driver.UndoWithoutState(ctx, store, path, env, pod_name, errors);
  // Our policy rules outlive the device: those at our priority into a table that lost every route.
  if (pod) keep(RemoveOrphanRules(*pod, ctx.cfg.routing.rule_priority));
  // The address lease: IPAM DEL is idempotent.
  if (!ctx.cfg.ipam_type.empty()) {
    auto r = ctx.ipam.Run(ctx.cfg.ipam_type, "DEL", ipam::DelegateConfig(ctx.cfg).dump());
    if (!r.ok()) keep(std::move(r).error());
  }
  if (!errors.empty()) {
    Error joined = JoinErrors(errors, "DEL without a readable state");
    joined.code = Code::kDelIncomplete;
    return joined;
  }
  if (!base::PathExists(path)) return base::Ok();
  // Kept for a post-mortem, out of the way of later ADDs, DELs and GC.
  const std::string aside = path + ".unreadable";
  if (Status moved = base::RenameFile(path, aside.substr(aside.rfind('/') + 1)); !moved.ok())
    return std::move(moved).error().WithContext("moving the unreadable state " + path + " aside");
  base::Log::Warn("unreadable state kept as " + aside);
  return base::Ok();
}

}  // namespace

std::optional<Status> DelWithoutState(const conf::Config& cfg, const Env& env, int lock_wait_ms) {
  const StateStore store(cfg.data_dir, cfg.name);
  // Without dataDir nothing of ours exists (the network's directory is no such sign: a DEL may have died
  // between it and a claim). One that cannot be looked at proves nothing: an error.
  auto data_dir = base::PrivateDirExists(store.DataDir());
  if (!data_dir.ok()) return Status(std::move(data_dir).error().WithContext("DEL looking for its state"));
  if (!*data_dir) {
    base::Log::Info("no state for this attachment: nothing to do");
    return base::Ok();
  }
  if (Status s = store.Check(); !s.ok()) return s;
  // One look at the network's directory before three at a state's names (every pod passing through DELs).
  const std::string path = store.PathFor(env.container_id, env.ifname);
  auto network_dir = base::Exists(store.Dir());
  if (!network_dir.ok()) return Status(std::move(network_dir).error());
  if (*network_dir)
    for (const std::string& p : store.PathsOf(env.container_id, env.ifname)) {
      auto there = base::Exists(p);
      if (!there.ok() || *there) return std::nullopt;  // Del reads it, or names why it cannot
    }
  // An ADD that died between its claim and its first state write.
  if (ClaimOf(store.DevicesDir(), path)) return std::nullopt;
  DropShares(store.DevicesDir(), store.ChildrenDir(), path, lock_wait_ms);
  base::Log::Info("no state for this attachment: nothing to do");
  return base::Ok();
}

Status Del(Context& ctx) {
  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  // Nothing is read, let alone acted on, from a directory others could write.
  RETURN_IF_ERROR(store.Check());
  // A group's file lists its devices (not for a member: its key may be its group's).
  if (!ctx.member_of) {
    const std::string group_path = store.GroupPathFor(ctx.env.container_id, ctx.env.ifname);
    auto group = store.Load(group_path);
    if (!group.ok() && group.error().sys_errno == kHostileState) return std::move(group).error();
    if (!group.ok()) {
      // Its members say whose they are (memberOf); the file is set aside for a post-mortem.
      const std::string aside = group_path + ".unreadable";
      base::Log::Warn("group state " + group_path + " cannot be used (" + group.error().msg +
                      "); DEL finds its members by memberOf and keeps the file as " + aside);
      RETURN_IF_ERROR(base::RenameFile(group_path, aside.substr(aside.rfind('/') + 1)));
      AttachmentState st = NewState(ctx, ctx.env.ifname, 0);
      st.group = true;
      return DeleteGroup(ctx, store, group_path, st);
    }
    if (*group) return DeleteGroup(ctx, store, group_path, **group);
  }
  // An attachment made by an older erdma-cni keeps its file's older name.
  std::string path;
  auto loaded = store.LoadLocated(ctx.env.container_id, ctx.env.ifname, &path);
  // A file holding what ADD never writes says nothing of which device is ours: left to the admin.
  if (!loaded.ok() && loaded.error().sys_errno == kHostileState) return std::move(loaded).error();
  if (!loaded.ok()) return DelWithoutReadableState(ctx, store, path, loaded.error());
  if (!*loaded) {
    // A claim naming the missing state says which device is ours.
    if (ClaimOf(store.DevicesDir(), path))
      return DelWithoutReadableState(ctx, store, path,
                                     Error(Code::kState, "state file missing, device claim present"));
    // A child's share outlives its state only if a DEL died in between.
    DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms);
    base::Log::Info("no state for this attachment: nothing to do");
    return base::Ok();
  }
  return DeleteAttachment(ctx, store, path, **loaded);
}

}  // namespace cni

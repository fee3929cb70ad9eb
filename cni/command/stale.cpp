#include "cni/command/stale.h"

#include <algorithm>
#include <optional>

#include "base/fault.h"
#include "base/log.h"
#include "cni/command/del.h"
#include "cni/command/group.h"
#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "cni/state/record.h"
#include "conf/node.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;

namespace {

// Why the attachment `st` is provably dead: its recorded netns is gone and a device it moved is back on the
// node. "" when it may be alive or the node cannot be read.
std::string WhyStale(Context& ctx, const AttachmentState& st) {
  std::string kept_by;
  if (ctx.netns.MayExist(st.netns, st.netns_id, &kept_by)) {
    base::Log::Info("container " + st.container_id + " (interface " + st.if_name +
                    ") is live: its pod netns " + st.netns + " may still exist (" + kept_by + ")");
    return "";
  }
  std::string why = "its pod netns " + (st.netns.empty() ? std::string("(none recorded)") : st.netns) +
                    (st.netns_id ? " is gone (no task, descriptor, socket or mount keeps it)"
                                 : " no longer exists (an older state: checked by path only)");
  const StepMove* move = FindStep<StepMove>(st.steps);
  const StepMac* pod_mac = FindStep<StepMac>(st.steps);
  if (!move) return why;  // a child went with its netns; a VF on vfio-pci never left
  auto home = FindHome(st.origin, move->pod_name, ctx.host, pod_mac ? pod_mac->mac : "");
  if (!home.ok() || !*home) {
    base::Log::Info("container " + st.container_id + " (interface " + st.if_name +
                    ") lost its pod netns, but " + st.origin.name +
                    " is not back on the node: not recovered");
    return "";
  }
  return why + " and " + st.origin.name + " is back on the node" +
         ((*home)->name == st.origin.name ? "" : " as " + (*home)->name);
}

}  // namespace

Result<bool> RecoverStale(Context& ctx, const std::string& data_dir, const ClaimOwner& owner,
                          const LockedClaim* locked) {
  StateStore store(data_dir, owner.network);
  // Only a state of this dataDir, where the claim says it is.
  const std::string name = owner.state_path.substr(owner.state_path.rfind('/') + 1);
  if (owner.state_path != store.Dir() + "/" + name) return false;
  auto loaded = store.Load(owner.state_path);
  if (!loaded.ok()) {
    base::Log::Warn("cannot tell whether container " + owner.container_id + " still holds " + owner.device +
                    ": " + loaded.error().msg);
    return false;
  }
  if (!*loaded) return true;
  AttachmentState& st = **loaded;
  if (st.container_id != owner.container_id || st.if_name != owner.if_name) return false;
  const std::string why = WhyStale(ctx, st);
  if (why.empty()) return false;
  base::Log::Warn("recovering " + owner.device + " from container " + st.container_id + " (network " +
                  st.network + ", interface " + st.if_name + "), whose DEL never finished: " + why);
  auto failed = [&](const Error& e) {
    return Error(Code::kTryAgainLater,
                 owner.device + " is held by container " + st.container_id +
                     ", whose pod is gone; finishing " +
                     "its DEL failed (its state is kept; the next ADD, DEL or GC retries): " + e.msg,
                 e.details);
  };
  if (auto s = base::fault::Point("before", "stale-recover"); !s.ok()) return failed(s.error());
  // The old attachment's DEL, with no pod netns: its path may name another pod's by now (a reused name).
  const std::string recorded_netns = st.netns;
  st.netns.clear();
  Env env = ctx.env;
  env.container_id = st.container_id;
  env.ifname = st.if_name;
  env.netns.clear();
  env.args.clear();
  Context old{
      ctx.cfg,        env, ctx.host, ctx.netns, ctx.ipam, ctx.sysfs_root, ctx.procfs_root, ctx.lock_wait_ms,
      ctx.node_policy};
  ctx.ipam.RunFor(ipam::Attachment{st.container_id, st.if_name, recorded_netns});
  base::Status deleted = DeleteAttachment(old, store, owner.state_path, st, locked);
  ctx.ipam.RunFor(std::nullopt);
  if (!deleted.ok()) return failed(deleted.error());
  if (st.member_of) ForgetGroupIfEmpty(store, st.container_id, *st.member_of);
  if (ctx.node_policy)
    DropRecord(ctx.node_policy->attachments_dir, st.container_id, st.member_of.value_or(st.if_name),
               RecordPlace{data_dir, owner.network});
  if (auto s = base::fault::Point("after", "stale-recover"); !s.ok()) return failed(s.error());
  return true;
}

Result<bool> RecoverClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner) {
  ASSIGN_OR_RETURN(auto claim, DeviceClaim::Lock(store.DevicesDir(), owner.device, ctx.lock_wait_ms));
  // Read without the lock: another ADD may have recovered it meanwhile.
  auto now = claim.Owner();
  bool free = !now || now->state_path != owner.state_path || !ClaimIsLive(*now);
  if (!free) {
    LockedClaim locked{claim, owner.device};
    ASSIGN_OR_RETURN(free, RecoverStale(ctx, store.DataDir(), *now, &locked));
  }
  if (!claim.Owner()) claim.Remove();
  return free;
}

}  // namespace cni

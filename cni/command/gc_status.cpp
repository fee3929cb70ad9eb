// GC and STATUS (CNI 1.1.0).
#include "cni/command/gc_status.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/file.h"
#include "base/log.h"
#include "cni/command/del.h"
#include "cni/command/stale.h"
#include "cni/core/context.h"
#include "cni/device/lookup.h"
#include "cni/driver/driver.h"
#include "cni/driver/sriov.h"
#include "cni/journal/journal.h"
#include "cni/state/claim.h"
#include "cni/state/record.h"
#include "cni/state/state.h"
#include "conf/node.h"
#include "ipam/negotiate.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;
using nlohmann::json;

namespace {

Status ForwardToIpam(Context& ctx, const std::string& command) {
  if (ctx.cfg.ipam.is_null() || ctx.cfg.ipam_type.empty()) return base::Ok();
  // A plugin older than CNI 1.1.0 does not know GC or STATUS: ask.
  auto versions =
      ctx.ipam.Run(ctx.cfg.ipam_type, "VERSION", json{{"cniVersion", ctx.cfg.cni_version}}.dump());
  const bool knows =
      versions.ok() && versions->is_object() && versions->contains("supportedVersions") &&
      (*versions)["supportedVersions"].is_array() &&
      std::any_of((*versions)["supportedVersions"].begin(), (*versions)["supportedVersions"].end(),
                  [](const json& v) { return v.is_string() && v.get<std::string>() == "1.1.0"; });
  if (!knows) {
    base::Log::Info("ipam " + ctx.cfg.ipam_type + " predates CNI 1.1.0; not forwarding " + command);
    return base::Ok();
  }
  auto r = ctx.ipam.Run(ctx.cfg.ipam_type, command, ipam::DelegateConfig(ctx.cfg).dump());
  return r.ok() ? base::Ok() : Status(std::move(r).error());
}

}  // namespace

Status Gc(Context& ctx) {
  std::set<std::pair<std::string, std::string>> valid;
  // Without the list GC cannot tell a live attachment from a stale one.
  auto it = ctx.cfg.raw.find("cni.dev/valid-attachments");
  if (it == ctx.cfg.raw.end())
    return Error(Code::kInvalidConfig,
                 "GC of network " + ctx.cfg.name +
                     ": the config lacks cni.dev/valid-attachments, which the CNI spec (1.1.0, GC) makes "
                     "mandatory; nothing was removed. Pass the attachments that are still in use, or [] "
                     "when none are");
  if (!it->is_array())
    return Error(Code::kInvalidConfig,
                 "cni.dev/valid-attachments: must be an array of {containerID, ifname}");
  for (const auto& a : *it) {
    if (!a.is_object() || !a.contains("containerID") || !a["containerID"].is_string() ||
        !a.contains("ifname") || !a["ifname"].is_string())
      return Error(Code::kInvalidConfig,
                   "cni.dev/valid-attachments: every entry needs string containerID and ifname");
    valid.emplace(a["containerID"].get<std::string>(), a["ifname"].get<std::string>());
  }

  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  RETURN_IF_ERROR(store.Check());
  ASSIGN_OR_RETURN(auto paths, store.List());
  std::vector<Error> errors;
  for (const auto& path : paths) {
    const std::optional<base::FileId> read = base::FileIdOf(path);
    auto loaded = store.Load(path);
    if (!loaded.ok()) base::Log::Error("GC: skipping " + path + ": " + loaded.error().msg);
    if (!loaded.ok() || !*loaded) continue;
    AttachmentState& st = **loaded;
    // A group's members go with their group.
    if (valid.count({st.container_id, st.member_of.value_or(st.if_name)})) continue;
    if (st.member_of && base::PathExists(store.GroupPathFor(st.container_id, *st.member_of))) continue;
    // An attachment whose ADD or DEL runs is not GC's (the list may predate it): its lock, without waiting,
    // and under it the state must be the one read.
    std::optional<AttachmentRecord> lock;
    if (ctx.node_policy) {
      auto l = AttachmentRecord::TryLock(ctx.node_policy->attachments_dir, st.container_id, st.if_name);
      if (!l.ok()) {
        base::Log::Info("GC: leaving " + st.container_id + "/" + st.if_name + ": " + l.error().msg);
        continue;
      }
      lock = std::move(*l);
    }
    if (base::FileIdOf(path) != read) {
      base::Log::Info("GC: leaving " + st.container_id + "/" + st.if_name +
                      ": its state changed while GC read it (an ADD or DEL was running)");
      if (lock) lock->RemoveIfEmpty();
      continue;
    }
    base::Log::Info("GC: removing stale attachment " + st.container_id + "/" + st.if_name);
    // IPAM releases what it gave that attachment, not GC's (which names none).
    ctx.ipam.RunFor(ipam::Attachment{st.container_id, st.if_name, st.netns});
    Status s = DeleteAttachment(ctx, store, path, st);
    ctx.ipam.RunFor(std::nullopt);
    if (lock) {
      if (s.ok())
        lock->RemoveIfAt(RecordPlace{ctx.cfg.data_dir, ctx.cfg.name});
      else
        lock->RemoveIfEmpty();
    }
    if (!s.ok()) errors.push_back(std::move(s).error());
  }
  // Claims and shares of other networks of this dataDir whose holder is provably dead.
  for (const HoldRecord& h : ListHolds(store.DevicesDir(), store.ChildrenDir())) {
    if (!h.live || h.owner.network == ctx.cfg.name) continue;
    auto r = RecoverStale(ctx, store.DataDir(), h.owner, nullptr);
    if (!r.ok()) errors.push_back(std::move(r).error());
  }
  // Shares whose attachment is gone, in any network of this dataDir.
  SweepShares(store.DevicesDir(), store.ChildrenDir(), ctx.lock_wait_ms);
  Status ipam = ForwardToIpam(ctx, "GC");
  if (!ipam.ok()) errors.push_back(std::move(ipam).error());
  if (!errors.empty()) return JoinErrors(errors, "GC");
  return base::Ok();
}

Status StatusCmd(Context& ctx) {
  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  Status ready = store.Prepare();
  if (ready.ok()) {
    const std::string probe = store.Dir() + "/.status-probe";
    ready = base::WriteFileAtomic(probe, "");
    (void)base::RemoveFile(probe);
  }
  if (!ready.ok())
    return Error(Code::kNotAvailable,
                 "dataDir " + ctx.cfg.data_dir + " is not writable: " + ready.error().msg);

  const bool fixed_device = !ctx.cfg.device.value.empty() &&
                            ctx.cfg.device.by != conf::DeviceSelector::By::kDeviceId &&
                            ctx.cfg.device.by != conf::DeviceSelector::By::kResource &&
                            ctx.cfg.device.by != conf::DeviceSelector::By::kPool;
  if (fixed_device) {
    const DeviceQuery q = QueryFor(ctx.cfg.device);
    auto rdma = ctx.netns.OpenRdma("");
    ASSIGN_OR_RETURN(auto dev, FindDevice(ctx.host, rdma.ok() ? rdma->get() : nullptr, q, ctx.sysfs_root));
    // A device without a netdev (a VF bound to vfio-pci): its driver says whether it is there.
    const bool present = dev || ctx.cfg.mode->driver().PresentWithoutNetdev(ctx, q);
    if (!present && !FindClaim(store.DevicesDir(), q.name, q.mac, q.pci))
      return Error(Code::kNotAvailable, q.Describe() + " is not on the node and not attached to a pod; fix " +
                                            ctx.cfg.device.Describe());
  }
  Status ipam = ForwardToIpam(ctx, "STATUS");
  if (!ipam.ok()) return Error(Code::kNotAvailable, ipam.error().msg, ipam.error().details);
  return base::Ok();
}

}  // namespace cni

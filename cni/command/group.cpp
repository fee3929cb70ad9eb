#include "cni/command/group.h"

#include <algorithm>

#include "base/fault.h"
#include "base/log.h"
#include "cni/command/add.h"
#include "cni/command/check.h"
#include "cni/command/del.h"
#include "cni/device/choice.h"
#include "cni/driver/driver.h"
#include "cni/journal/journal.h"
#include "cni/state/device_info.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

namespace {

// A member's own context: the group's `of`, with the member's device, pod-side name and place in the result
// chain. Member k's routes go at metric + k: rails in one subnet would ask for the same route twice.
class Member {
 public:
  Member(Context& group, const AttachmentState& of, const std::string& pod_name, size_t k,
         const conf::DeviceSelector* device, json prev_result)
      : cfg_(group.cfg), env_(group.env), ctx_(ForAttachment(group, cfg_, env_)), ipam_(group.ipam) {
    cfg_.if_name = pod_name;
    env_.container_id = of.container_id;
    env_.ifname = pod_name;
    if (device) cfg_.device = *device;
    cfg_.prev_result = std::move(prev_result);
    cfg_.routing.route_metric += static_cast<uint32_t>(k);
    ctx_.member_of = of.if_name;
    // CNI_ARGS are the pod's unless the group is another pod's (GC) or the invocation names none.
    ipam_.RunFor(
        ipam::Attachment{env_.container_id, pod_name, env_.netns,
                         !group.env.container_id.empty() && group.env.container_id == of.container_id});
  }
  ~Member() { ipam_.RunFor(std::nullopt); }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;
  Context& ctx() { return ctx_; }

 private:
  conf::Config cfg_;
  Env env_;
  Context ctx_;
  ipam::Executor& ipam_;
};

// The members of the group `st`: its journal's, or when it lists none, the states that say so (memberOf).
std::vector<StepMember> MembersOf(const StateStore& store, const AttachmentState& st) {
  std::vector<StepMember> members;
  for (const Step& s : st.steps)
    if (const auto* m = std::get_if<StepMember>(&s)) members.push_back(*m);
  // ADD journals each member before its state exists: a journal that lists members lists them all.
  if (!members.empty()) return members;
  auto paths = store.List();
  if (!paths.ok()) return members;
  for (const std::string& p : *paths) {
    auto other = store.Load(p);
    if (!other.ok() || !*other || (*other)->container_id != st.container_id ||
        (*other)->member_of != std::optional<std::string>(st.if_name))
      continue;
    const std::string& name = (*other)->if_name;
    if (std::none_of(members.begin(), members.end(), [&](const StepMember& m) { return m.pod_name == name; }))
      members.push_back(
          {name, (*other)->origin.name.empty() ? name : (*other)->origin.name, "found by memberOf"});
  }
  return members;
}

// The group's device-info file, then each member's DEL, last first; the ones undone leave the journal.
std::vector<Error> UndoMembers(Context& ctx, const std::vector<StepMember>& members, AttachmentState& st) {
  std::vector<Error> errors;
  if (Status s = RemoveDeviceInfo(st.device_info); !s.ok()) errors.push_back(std::move(s).error());
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    const StepMember& m = *it;
    Status s = base::fault::Point("undo-before", StepMember::kOp);
    if (s.ok()) {
      const conf::DeviceSelector device{conf::DeviceSelector::By::kDeviceId, m.device, {}};
      Member member(ctx, st, m.pod_name, 0, &device, json());
      s = Del(member.ctx());
    }
    if (s.ok()) s = base::fault::Point("undo-after", StepMember::kOp);
    if (!s.ok()) {
      base::Log::Error("undo " + Describe(m) + ": " + s.error().msg);
      errors.push_back(std::move(s).error().WithContext("undo " + Describe(m)));
      continue;
    }
    auto undone = std::find_if(st.steps.begin(), st.steps.end(), [&](const Step& s) {
      const auto* other = std::get_if<StepMember>(&s);
      return other && other->pod_name == m.pod_name;
    });
    if (undone != st.steps.end()) st.steps.erase(undone);
  }
  return errors;
}

// A group whose ADD failed: its members undone and its file removed, or kept for DEL (code 102).
Error RollBackGroup(Context& ctx, const StateStore& store, const std::string& path, AttachmentState& st,
                    Error err) {
  base::Log::Error("ADD failed: " + err.msg + "; rolling back the group's members");
  std::vector<StepMember> members;
  for (const Step& s : st.steps) members.push_back(std::get<StepMember>(s));
  std::vector<Error> undo = UndoMembers(ctx, members, st);
  if (undo.empty()) {
    (void)store.Remove(path);
    return err;
  }
  (void)store.Save(path, st);
  Error joined = JoinErrors(undo, "rollback");
  return Error(Code::kRollbackIncomplete,
               err.msg + "; rollback incomplete: " + joined.msg + " (state kept in " + path + " for DEL)",
               joined.details);
}

Result<json> AddGroup(Context& ctx, const DeviceChoice& choice, netlink::Kernel& pod) {
  const conf::Config& cfg = ctx.cfg;
  StateStore store(cfg.data_dir, cfg.name);
  RETURN_IF_ERROR(store.Prepare());
  const std::string path = store.GroupPathFor(ctx.env.container_id, ctx.env.ifname);
  RETURN_IF_ERROR(RefuseExisting(ctx, store));
  const std::string base = PodIfName(ctx);
  std::vector<std::string> names;
  for (size_t k = 0; k < choice.want; ++k) {
    names.push_back(cfg.device.Several() ? MemberName(base, k) : base);
    if (names.back().empty())
      return Error(Code::kInvalidConfig,
                   (cfg.chained() ? "ifName" : "CNI_IFNAME") + std::string(" \"") + base + "\": interface " +
                       std::to_string(k) +
                       " of this attachment would be named longer than 15 bytes; choose "
                       "a shorter name");
  }

  AttachmentState st = NewState(ctx, base, 0);
  st.group = true;
  st.member_of.reset();
  st.netns_id = ctx.netns.Identify(pod);
  json result = cfg.prev_result;
  std::string first_pci, first_rdma;  // the device-info file's
  size_t next = 0;
  for (size_t k = 0; k < choice.want; ++k) {
    std::optional<Error> last;
    bool done = false;
    while (!done && next < choice.candidates.size()) {
      const DeviceCandidate& cand = choice.candidates[next++];
      st.steps.emplace_back(StepMember{names[k], cand.selector.value, cand.why});
      Status s = store.Save(path, st);
      if (s.ok()) s = base::fault::Point("before", StepMember::kOp);
      if (!s.ok()) return RollBackGroup(ctx, store, path, st, std::move(s).error());
      Result<json> r = [&] {
        Member member(ctx, st, names[k], k, &cand.selector, result);
        Result<json> added = Add(member.ctx());
        if (added.ok() && first_pci.empty()) {
          first_pci = member.ctx().attached_pci;
          first_rdma = member.ctx().attached_rdma;
        }
        return added;
      }();
      if (r.ok()) {
        result = std::move(r).value();
        base::Log::Info(names[k] + ": " + cand.selector.value + " (" + cand.why + ")");
        if (Status after = base::fault::Point("after", StepMember::kOp); !after.ok())
          return RollBackGroup(ctx, store, path, st, std::move(after).error());
        done = true;
        break;
      }
      Error e = std::move(r).error();
      // A member that could not undo itself keeps its place in the journal.
      if (e.code != Code::kRollbackIncomplete) st.steps.pop_back();
      if (choice.alternatives && e.code == Code::kTryAgainLater) {
        base::Log::Info(names[k] + ": " + cand.selector.value + " passed over (" + e.msg + ")");
        last = std::move(e);
        continue;
      }
      return RollBackGroup(ctx, store, path, st,
                           std::move(e).WithContext(names[k] + " on " + cand.selector.value));
    }
    if (!done)
      return RollBackGroup(ctx, store, path, st,
                           Error(Code::kTryAgainLater,
                                 "device.pool: no free device was left for " + names[k] + ", interface " +
                                     std::to_string(k + 1) + " of " + std::to_string(choice.want) +
                                     (last ? " (last: " + last->msg + ")" : std::string()) +
                                     "; retry when other pods have left, or widen the pool"));
  }
  if (auto info = first_pci.empty() ? std::nullopt : DeviceInfoPath(cfg)) {
    Status s = WriteDeviceInfo(st.device_info, {*info, DeviceInfoText(first_pci, first_rdma)},
                               [&] { return store.Save(path, st); });
    if (!s.ok()) return RollBackGroup(ctx, store, path, st, std::move(s).error());
  }
  st.complete = true;
  st.result = result;
  if (Status s = store.Save(path, st); !s.ok())
    return RollBackGroup(ctx, store, path, st, std::move(s).error());
  base::Log::Info("group of " + std::to_string(choice.want) + " attached");
  return result;
}

}  // namespace

Result<json> AddChosen(Context& ctx, std::optional<kubelet::PodAllocation> answer) {
  const conf::Config& cfg = ctx.cfg;
  // Bad input first, before the kubelet is asked.
  const bool ips = ctx.requests && !ctx.requests->ips.empty();
  if (cfg.device.Several() && (PodMac(ctx) || ips))
    return Error(Code::kInvalidConfig,
                 std::string(PodMac(ctx) ? "mac" : ctx.requests->ips_key) +
                     ": the pod gets several interfaces here (device.count), and one MAC or address cannot "
                     "go to all of them; remove the request, or take one device per attachment");
  std::unique_ptr<netlink::Kernel> pod_owned;
  ASSIGN_OR_RETURN(netlink::Kernel * pod, OpenNetns(ctx, ctx.env.netns, pod_owned));
  ASSIGN_OR_RETURN(DeviceChoice choice, ChooseDevices(ctx, std::move(answer)));
  if (choice.alternatives || cfg.device.Several()) return AddGroup(ctx, choice, *pod);
  conf::Config one = cfg;
  one.device = choice.candidates.front().selector;
  Context with = ForAttachment(ctx, one, ctx.env);
  return Add(with);
}

Status DeleteGroup(Context& ctx, const StateStore& store, const std::string& path,
                   const AttachmentState& st) {
  AttachmentState left = st;
  std::vector<Error> errors = UndoMembers(ctx, MembersOf(store, st), left);
  if (!errors.empty()) {
    (void)store.Save(path, left);
    return JoinErrors(errors, "DEL of the group " + st.container_id + "/" + st.if_name);
  }
  return store.Remove(path);
}

void ForgetGroupIfEmpty(const StateStore& store, const std::string& container_id,
                        const std::string& group_if) {
  const std::string path = store.GroupPathFor(container_id, group_if);
  auto group = store.Load(path);
  if (!group.ok() || !*group) return;
  for (const StepMember& m : MembersOf(store, **group)) {
    auto member = store.Load(store.PathFor(container_id, m.pod_name));
    if (!member.ok() || *member) return;
  }
  if (store.Remove(path).ok())
    base::Log::Info("the group " + container_id + "/" + group_if + " has no member left: its file is gone");
}

Status CheckGroup(Context& ctx, const AttachmentState& st) {
  if (!st.complete)
    return Error(Code::kUnknownContainer, "CHECK: the group " + st.container_id + "/" + st.if_name +
                                              " in network " + ctx.cfg.name + " did not finish its ADD");
  for (const Step& s : st.steps) {
    const auto& m = std::get<StepMember>(s);
    Member member(ctx, st, m.pod_name, 0, nullptr, ctx.cfg.prev_result);
    if (Status c = Check(member.ctx()); !c.ok()) return std::move(c).error().WithContext(m.pod_name);
  }
  return base::Ok();
}

}  // namespace cni

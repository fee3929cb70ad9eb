#include "cni/journal.h"

#include <cerrno>

#include "base/fault.h"
#include "base/log.h"
#include "cni/rdma.h"
#include "cni/route_restore.h"
#include "cni/smcr.h"
#include "cni/vf.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;
using netlink::LinkInfo;

namespace {

bool IsGone(const Error& e) {
  return e.sys_errno == ENODEV || e.sys_errno == ESRCH || e.sys_errno == ENOENT ||
         e.sys_errno == EADDRNOTAVAIL;
}

Status IgnoreGone(Status s) {
  if (!s.ok() && IsGone(s.error())) return base::Ok();
  return s;
}

Status IgnoreExists(Status s) {
  if (!s.ok() && s.error().sys_errno == EEXIST) return base::Ok();
  return s;
}

Error NameTaken(const DeviceOrigin& o, const LinkInfo& holder) {
  return Error(Code::kNameTaken,
               "cannot return the device (mac " + o.mac + ") to the node as " + o.name + ": link " +
                   holder.name + " (index " + std::to_string(holder.index) + ", mac " + holder.mac +
                   ") holds that name; rename or remove it and run DEL again (the state is kept)");
}

// The kernel's terse refusals of a new macvlan/ipvlan, explained: the
// explanation becomes the message, the kernel's words its details.
Error ChildRefused(Error e, const StepChild& c) {
  constexpr uint32_t kPassthru = 8;  // MACVLAN_MODE_PASSTHRU
  std::string why;
  if (e.sys_errno == EBUSY) {
    why = c.parent + " cannot take a " + c.spec.kind +
          " child: it already has children of the other kind (macvlan and ipvlan cannot share a parent), "
          "or it is enslaved to a bridge or bond";
  } else if (e.sys_errno == EINVAL && c.spec.kind == "macvlan") {
    why =
        c.spec.mode == kPassthru
            ? c.parent + " already has a macvlan child, and a passthru macvlan must be its parent's only one"
            : c.parent + " refused a macvlan child; if it has a passthru macvlan, that allows no other child";
    // Another pod holds the parent: it frees up when that pod goes.
    e.code = Code::kTryAgainLater;
  }
  if (why.empty()) return e;
  e.details = e.msg + (e.details.empty() ? "" : " (" + e.details + ")");
  e.msg = why;
  return e;
}

// A pod-side address or route planned before its link existed names it by
// index 0; once the link is in the pod, it is `pod_index`.
void BindPodIndex(Step& step, int pod_index) {
  if (pod_index == 0) return;
  if (auto* a = std::get_if<StepAddr>(&step); a && a->addr.ifindex == 0) a->addr.ifindex = pod_index;
  if (auto* r = std::get_if<StepRoute>(&step); r && r->route.oif == 0) r->route.oif = pod_index;
}

// Restores what the move took away. Every call is idempotent.
Status RestoreOnHost(const DeviceOrigin& o, netlink::Kernel& host) {
  ASSIGN_OR_RETURN(auto link, host.FindLink(o.name));
  if (!link) return Error(Code::kDeviceNotFound, "device " + o.name + " vanished while being restored");
  const int index = link->index;
  std::vector<Error> errors;
  auto keep = [&](Status s) {
    if (!s.ok()) errors.push_back(std::move(s).error());
  };
  bool up = link->up;
  if (!o.mac.empty() && link->mac != o.mac) {
    // A MAC the pod gave it (mode vf). Most drivers take a new MAC only
    // while the link is down; after a move it is.
    Status mac = host.SetMac(index, o.mac);
    if (!mac.ok() && mac.error().sys_errno == EBUSY && up) {
      keep(host.SetUp(index, false));
      up = false;
      mac = host.SetMac(index, o.mac);
    }
    keep(std::move(mac));
  }
  if (o.mtu != 0 && link->mtu != o.mtu) keep(host.SetMtu(index, o.mtu));
  for (auto a : o.addrs) {
    a.ifindex = index;
    keep(IgnoreExists(host.AddAddr(a)));
  }
  if (o.up && !up) keep(host.SetUp(index, true));
  keep(RestoreRoutes(o.routes, index, host));
  if (!o.up && up) keep(host.SetUp(index, false));
  if (!errors.empty()) return JoinErrors(errors, "restoring " + o.name + " on the node");
  return base::Ok();
}

}  // namespace

Error JoinErrors(const std::vector<Error>& errors, const std::string& what) {
  Error e = errors.front();
  e.Context(what);
  for (size_t i = 1; i < errors.size(); ++i) {
    if (!e.details.empty()) e.details += "; ";
    e.details += errors[i].msg;
    if (!errors[i].details.empty()) e.details += " (" + errors[i].details + ")";
  }
  return e;
}

Status Journal::Persist() { return store_.Save(path_, state_); }

Status Journal::Run(const std::vector<Step>& steps, StepEnv& env) {
  if (steps.empty()) return base::Ok();
  const size_t first = state_.steps.size();
  state_.steps.insert(state_.steps.end(), steps.begin(), steps.end());
  RETURN_IF_ERROR(Persist());
  for (size_t i = first; i < state_.steps.size(); ++i) {
    Step& step = state_.steps[i];
    // Written before the move or the child's creation told the pod-side
    // index; the next state write records it.
    BindPodIndex(step, env.pod_index);
    base::Log::Info(DescribeStep(step));
    Status s = base::fault::Point("before", StepOp(step));
    if (s.ok()) s = ApplyStep(step, state_, env);
    if (s.ok()) s = base::fault::Point("after", StepOp(step));
    if (!s.ok()) {
      Error e = std::move(s).error().WithContext(DescribeStep(step));
      // The steps after it never ran; the failed one is owed an undo only
      // if it may have changed something. An undo of what never happened can
      // only fail (a read-only sysctl cannot be written back either), and
      // would keep the attachment from ever being deleted.
      state_.steps.erase(state_.steps.begin() + static_cast<std::ptrdiff_t>(e.changed_nothing ? i : i + 1),
                         state_.steps.end());
      return e;
    }
  }
  return base::Ok();
}

void Journal::DropLast() {
  if (!state_.steps.empty()) state_.steps.pop_back();
}

Status ApplyStep(const Step& step, const AttachmentState& state, StepEnv& env) {
  if (std::holds_alternative<StepIpam>(step)) return base::Ok();  // run by the caller: it yields addresses
  const bool needs_pod = !std::holds_alternative<StepSysctl>(step) &&
                         !std::holds_alternative<StepPnet>(step) && !std::holds_alternative<StepUeid>(step) &&
                         !std::holds_alternative<StepVf>(step);
  if (needs_pod && !env.pod) return Error(Code::kInvalidEnv, "the pod netns is gone");
  return std::visit(
      [&](const auto& s) -> Status {
        using T = std::decay_t<decltype(s)>;
        netlink::Kernel* pod = env.pod;
        if constexpr (std::is_same_v<T, StepMove>) {
          RETURN_IF_ERROR(env.host.MoveLink(state.origin.index, *pod, s.pod_name));
          ASSIGN_OR_RETURN(auto moved, pod->FindLink(s.pod_name));
          if (!moved) return Error(Code::kKernel, s.pod_name + " is not in the pod after the move");
          env.pod_index = moved->index;
          return base::Ok();
        } else if constexpr (std::is_same_v<T, StepChild>) {
          Status made = env.host.AddChildLink(s.spec, *pod);
          if (!made.ok()) return ChildRefused(std::move(made).error(), s);
          ASSIGN_OR_RETURN(auto child, pod->FindLink(s.spec.name));
          if (!child) return Error(Code::kKernel, s.spec.name + " is not in the pod after it was created");
          env.pod_index = child->index;
          return base::Ok();
        } else if constexpr (std::is_same_v<T, StepVf>) {
          return ApplyVf(s, env.host_vf);
        } else if constexpr (std::is_same_v<T, StepMac>) {
          return pod->SetMac(env.pod_index, s.mac);
        } else if constexpr (std::is_same_v<T, StepMtu>) {
          return pod->SetMtu(env.pod_index, s.mtu);
        } else if constexpr (std::is_same_v<T, StepAddr>) {
          return pod->AddAddr(s.addr);
        } else if constexpr (std::is_same_v<T, StepUp>) {
          return pod->SetUp(env.pod_index, true);
        } else if constexpr (std::is_same_v<T, StepRoute>) {
          return pod->AddRoute(s.route);
        } else if constexpr (std::is_same_v<T, StepRule>) {
          return pod->AddRule(s.rule);
        } else if constexpr (std::is_same_v<T, StepRdmaMove>) {
          if (!env.host_rdma) return Error(Code::kRdmaUnavailable, "no RDMA netlink on the node");
          return MoveRdmaDevice(*env.host_rdma, s.device, pod->NetnsFd());
        } else if constexpr (std::is_same_v<T, StepSoftRdma>) {
          if (!env.pod_rdma) return Error(Code::kRdmaUnavailable, "no RDMA netlink in the pod");
          return env.pod_rdma->AddSoftDevice(s.device, "rxe", state.pod_if_name);
        } else if constexpr (std::is_same_v<T, StepSysctl>) {
          if (!env.pod_sysctl) return Error(Code::kInvalidEnv, "the pod's sysctls are not reachable");
          Status w = env.pod_sysctl->Write(s.name, s.value);
          return w.ok() ? w : Status(SysctlRefused(s, std::move(w).error()));
        } else if constexpr (std::is_same_v<T, StepPnet>) {
          if (!env.pod_smc) return Error(Code::kSmcUnsupported, "no SMC netlink in the pod");
          return env.pod_smc->AddPnet(s.entry);
        } else if constexpr (std::is_same_v<T, StepUeid>) {
          netlink::Smc* smc = env.pod_smc ? env.pod_smc : env.host_smc;
          if (!smc) return Error(Code::kSmcUnsupported, "no SMC netlink");
          Status added = IgnoreExists(smc->AddUeid(s.ueid));
          if (!added.ok() && added.error().sys_errno == ERANGE)
            return Error(
                Code::kSmcUnsupported,
                "smcr.ueid: the kernel's SMC User EID table is full (4 entries, node-wide); remove one "
                "that is no longer used",
                added.error().details, ERANGE);
          return added;
        } else {
          return base::Ok();
        }
      },
      step);
}

std::vector<Error> UndoSteps(const AttachmentState& state, StepEnv& env) {
  std::vector<Error> errors;
  bool moved = false;
  // A moved device goes home and a child is deleted: either way the link's
  // own addresses and routes leave with it.
  std::string pod_mac;  // a MAC the pod side got: how the move home recognises the device
  for (const auto& s : state.steps) {
    moved = moved || std::holds_alternative<StepMove>(s) || std::holds_alternative<StepChild>(s);
    if (const auto* m = std::get_if<StepMac>(&s)) pod_mac = m->mac;
  }

  for (auto it = state.steps.rbegin(); it != state.steps.rend(); ++it) {
    const Step& step = *it;
    Status s = base::fault::Point("undo-before", StepOp(step));
    if (!s.ok()) {
      errors.push_back(std::move(s).error().WithContext("undo " + DescribeStep(step)));
      continue;
    }
    // Steps on the moved device leave with it when it goes home.
    const bool covered =
        moved && (std::holds_alternative<StepRoute>(step) || std::holds_alternative<StepAddr>(step) ||
                  std::holds_alternative<StepMtu>(step) || std::holds_alternative<StepUp>(step) ||
                  std::holds_alternative<StepMac>(step));
    if (const auto* rule = std::get_if<StepRule>(&step)) {
      // Rules belong to the netns, not the device: they stay unless removed.
      if (env.pod) s = IgnoreGone(env.pod->DelRule(rule->rule));
    } else if (const auto* route = std::get_if<StepRoute>(&step)) {
      if (env.pod && !covered) s = IgnoreGone(env.pod->DelRoute(route->route));
    } else if (const auto* addr = std::get_if<StepAddr>(&step)) {
      if (env.pod && !covered) s = IgnoreGone(env.pod->DelAddr(addr->addr));
    } else if (const auto* move = std::get_if<StepMove>(&step)) {
      s = MoveHome(state.origin, move->pod_name, env, pod_mac);
    } else if (const auto* vf = std::get_if<StepVf>(&step)) {
      s = RestoreVf(*vf, env.host, env.host_vf);
    } else if (const auto* child = std::get_if<StepChild>(&step)) {
      s = DeleteChild(*child, env);
    } else if (const auto* ipam = std::get_if<StepIpam>(&step)) {
      if (env.ipam) {
        auto r = env.ipam->Run(ipam->type, "DEL", ipam->config.dump());
        // A journal that ends at an IPAM step of an ADD that did not finish
        // never got an answer from IPAM ADD. If the plugin cannot even be
        // started now, it most likely never was (an older erdma-cni
        // journaled it before looking for it): there is no lease to release,
        // and failing would keep the attachment, and the device, forever.
        const bool never_answered = !state.complete && &step == &state.steps.back();
        if (!r.ok() && r.error().changed_nothing && never_answered)
          base::Log::Warn("IPAM " + ipam->type + " cannot be run (" + r.error().msg +
                          "); ADD never got its answer, so no address is released");
        else if (!r.ok())
          s = std::move(r).error();
      } else {
        s = Error(Code::kIpam, "no IPAM executor to release the address");
      }
    } else if (const auto* rdma = std::get_if<StepRdmaMove>(&step)) {
      s = ReturnRdmaDevice(rdma->device, env.host_rdma, env.pod_rdma, env.host.NetnsFd());
    } else if (const auto* soft = std::get_if<StepSoftRdma>(&step)) {
      s = DeleteSoftDevice(soft->device, env.host_rdma, env.pod_rdma);
    } else if (const auto* sysctl = std::get_if<StepSysctl>(&step)) {
      // A pod netns that is gone took its sysctls with it.
      if (env.pod_sysctl) s = IgnoreGone(env.pod_sysctl->Write(sysctl->name, sysctl->old));
    } else if (const auto* pnet = std::get_if<StepPnet>(&step)) {
      if (env.pod_smc) s = IgnoreGone(env.pod_smc->DelPnet(pnet->entry.pnet_id));
    } else if (const auto* ueid = std::get_if<StepUeid>(&step)) {
      netlink::Smc* smc = env.pod_smc ? env.pod_smc : env.host_smc;
      if (env.ueid_in_use && env.ueid_in_use(ueid->ueid))
        base::Log::Info("SMC UEID " + ueid->ueid + " stays: another attachment uses it");
      else if (smc)
        s = IgnoreGone(smc->DelUeid(ueid->ueid));
    }
    // StepMtu, StepUp and StepMac: the pod-side link leaves with the move home.
    if (s.ok()) s = base::fault::Point("undo-after", StepOp(step));
    if (!s.ok()) {
      base::Log::Error("undo " + DescribeStep(step) + ": " + s.error().msg);
      errors.push_back(std::move(s).error().WithContext("undo " + DescribeStep(step)));
    } else if (!covered) {
      base::Log::Debug("undone: " + DescribeStep(step));
    }
  }
  return errors;
}

Status DeleteChild(const StepChild& c, StepEnv& env) {
  // A child is virtual: a pod netns that is gone took it along.
  if (!env.pod) return base::Ok();
  ASSIGN_OR_RETURN(auto link, env.pod->FindLink(c.spec.name));
  if (!link) return base::Ok();
  if (link->kind != c.spec.kind || (!c.spec.mac.empty() && link->mac != c.spec.mac)) {
    base::Log::Warn(c.spec.name + " in the pod is a " + (link->kind.empty() ? "device" : link->kind) +
                    " with MAC " + link->mac + ", not the " + c.spec.kind + " made here: left alone");
    return base::Ok();
  }
  RETURN_IF_ERROR(IgnoreGone(env.pod->DeleteLink(link->index)));
  base::Log::Info("deleted " + c.spec.kind + " " + c.spec.name + " from the pod");
  return base::Ok();
}

Status MoveHome(const DeviceOrigin& o, const std::string& pod_name, StepEnv& env,
                const std::string& pod_mac) {
  // A device is ours by what ADD recorded of it, never by a name alone: its
  // MAC (or the one the pod gave it), its kind when recorded. A MAC of all
  // zeros is lo's (and no device's we move), so it matches nothing.
  auto ours = [&](const LinkInfo& l) {
    if (l.mac == "00:00:00:00:00:00") return false;
    if (!o.kind.empty() && l.kind != o.kind) return false;
    return o.mac.empty() || l.mac == o.mac || (!pod_mac.empty() && l.mac == pod_mac);
  };
  // One the kernel handed back when the pod netns died keeps the index it
  // had (it was free: the device held it), and comes back under its pod-side
  // name or, when that is taken, "dev<N>"; and it is a physical device
  // (virtual ones die with the netns) unless ADD recorded another kind.
  auto returned_name = [&](const std::string& n) {
    return n == pod_name || (n.size() > 3 && n.starts_with("dev") &&
                             n.find_first_not_of("0123456789", 3) == std::string::npos);
  };
  auto came_back = [&](const LinkInfo& l) {
    return !o.mac.empty() && ours(l) && (!o.kind.empty() || l.kind.empty()) && returned_name(l.name) &&
           l.name != o.name && (o.index == 0 || l.index == o.index);
  };

  // The node name must be free (or already ours) before anything moves.
  ASSIGN_OR_RETURN(auto at_home, env.host.FindLink(o.name));
  if (at_home && ours(*at_home)) {
    base::Log::Info("device " + o.name + " is already on the node");
    return RestoreOnHost(o, env.host);
  }

  if (env.pod) {
    auto in_pod = env.pod->FindLink(pod_name);
    if (in_pod.ok() && *in_pod && ours(**in_pod)) {
      if (at_home) return NameTaken(o, *at_home);
      Status s = env.pod->MoveLink((*in_pod)->index, env.host, o.name);
      if (!s.ok()) {
        if (s.error().sys_errno == EEXIST) {
          auto holder = env.host.FindLink(o.name);
          if (holder.ok() && *holder) return NameTaken(o, **holder);
        }
        return std::move(s).error().WithContext("moving " + pod_name + " back to the node as " + o.name);
      }
      base::Log::Info("moved " + pod_name + " back to the node as " + o.name);
      return RestoreOnHost(o, env.host);
    }
  }

  // The pod netns died: the kernel returned a physical device to the node
  // under its pod-side name (or "devN" when that was taken).
  std::optional<LinkInfo> returned;
  ASSIGN_OR_RETURN(auto links, env.host.ListLinks());
  for (const auto& l : links)
    if (came_back(l)) returned = l;
  if (returned) {
    if (at_home) return NameTaken(o, *at_home);
    Status renamed = env.host.RenameLink(returned->index, o.name);
    if (!renamed.ok() && renamed.error().sys_errno == EBUSY) {
      // Linux refuses to rename a link that is up.
      RETURN_IF_ERROR(env.host.SetUp(returned->index, false));
      renamed = env.host.RenameLink(returned->index, o.name);
    }
    RETURN_IF_ERROR(renamed);
    base::Log::Info("device came back to the node as " + returned->name + "; renamed to " + o.name);
    return RestoreOnHost(o, env.host);
  }
  base::Log::Warn("device " + o.name + " (mac " + o.mac + ") is neither in the pod nor on the node; " +
                  "a virtual device dies with its netns: nothing to return");
  return base::Ok();
}

}  // namespace cni

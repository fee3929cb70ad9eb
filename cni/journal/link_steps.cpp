#include "cni/core/link_steps.h"

#include <cerrno>

#include "base/log.h"
#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "cni/journal/route_restore.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;
using netlink::LinkInfo;

namespace {

Error NameTaken(const DeviceOrigin& o, const LinkInfo& holder) {
  return Error(Code::kNameTaken,
               "cannot return the device (mac " + o.mac + ") to the node as " + o.name + ": link " +
                   holder.name + " (index " + std::to_string(holder.index) + ", mac " + holder.mac +
                   ") holds that name; rename or remove it and run DEL again (the state is kept)");
}

// The kernel's terse refusals of a new child, explained; its own words go to the details.
Error ChildRefused(Error e, const StepChild& c) {
  constexpr uint32_t kPassthru = 8;  // MACVLAN_MODE_PASSTHRU
  std::string why;
  if (e.sys_errno == EOPNOTSUPP) {
    why = "the node's kernel has no " + c.spec.kind + " link type: its module is not loaded (`modprobe " +
          c.spec.kind + "` on the node, or list it in /etc/modules-load.d/)";
  } else if (e.sys_errno == EBUSY) {
    why = c.parent + " cannot take a " + c.spec.kind +
          " child: it already has children of another kind (children of two kinds cannot share a parent), "
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
    // Most drivers take a new MAC only while the link is down.
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

bool IsMac(const std::string& m) { return conf::NormalizeMac(m).has_value(); }

}  // namespace

void Fields(JsonFields& f, StepMove& s) { f("name", s.pod_name); }
std::string Describe(const StepMove& s) { return "move into pod as " + s.pod_name; }
Status Apply(const StepMove& s, const AttachmentState& state, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  const DeviceOrigin& o = state.origin;
  RETURN_IF_ERROR(env.host.MoveLink(LinkInfo{o.index, o.name, o.mac, o.mtu, o.up, o.kind}, *pod, s.pod_name));
  ASSIGN_OR_RETURN(auto moved, pod->FindLink(s.pod_name));
  if (!moved) return Error(Code::kKernel, s.pod_name + " is not in the pod after the move");
  env.pod_index = moved->index;
  env.pod_mac = moved->mac;
  return base::Ok();
}
Status Undo(const StepMove& s, const UndoEnv& u, StepEnv& env) {
  return MoveHome(u.state.origin, s.pod_name, env, u.pod_mac);
}
Status Validate(const StepMove& s, const StepSite& at) {
  return CheckIfName(at.field_prefix + "name", s.pod_name);
}
Status Check(const StepMove&, CheckEnv&) { return base::Ok(); }  // the interface is checked by name

void Fields(JsonFields& f, StepChild& s) {
  f("kind", s.spec.kind);
  if (f.reading() && f.status().ok() && !netlink::IsChildKind(s.spec.kind))
    f.Refuse(std::string("child step kind must be ") + netlink::kChildKindList);
  f("parent", s.parent)("parentIndex", s.spec.parent_index)("name", s.spec.name)("mac", s.spec.mac);
  f("mode", s.spec.mode)("sourceMacs", s.spec.source_macs);
}
std::string Describe(const StepChild& s) {
  return "create " + s.spec.kind + " " + s.spec.name + " on " + s.parent + " in the pod";
}
Status Apply(const StepChild& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  Status made = env.host.AddChildLink(s.spec, *pod);
  if (!made.ok()) return ChildRefused(std::move(made).error(), s);
  ASSIGN_OR_RETURN(auto child, pod->FindLink(s.spec.name));
  if (!child) return Error(Code::kKernel, s.spec.name + " is not in the pod after it was created");
  env.pod_index = child->index;
  env.pod_mac = child->mac;
  return base::Ok();
}
Status Undo(const StepChild& s, const UndoEnv&, StepEnv& env) { return DeleteChild(s, env); }
Status Validate(const StepChild& s, const StepSite& at) {
  RETURN_IF_ERROR(CheckIfName(at.field_prefix + "parent", s.parent));
  RETURN_IF_ERROR(CheckIfName(at.field_prefix + "name", s.spec.name));
  if (!netlink::IsChildKind(s.spec.kind))
    return BadValue(at.field_prefix + "kind", s.spec.kind, netlink::kChildKindList);
  if (!s.spec.mac.empty() && !IsMac(s.spec.mac))
    return BadValue(at.field_prefix + "mac", s.spec.mac, "a MAC or \"\"");
  for (const auto& m : s.spec.source_macs)
    if (!IsMac(m)) return BadValue(at.field_prefix + "sourceMacs", m, "a MAC");
  return base::Ok();
}
Status Check(const StepChild& s, CheckEnv& env) {
  if (env.link.kind == s.spec.kind) return base::Ok();
  return Mismatch(env.state.pod_if_name + " is " +
                  (env.link.kind.empty() ? "a device" : "a " + env.link.kind) + ", expected the " +
                  s.spec.kind + " child of " + s.parent);
}

void Fields(JsonFields& f, StepMtu& s) { f("mtu", s.mtu); }
std::string Describe(const StepMtu& s) { return "set mtu " + std::to_string(s.mtu); }
Status Apply(const StepMtu& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  return pod->SetMtu(env.pod_index, s.mtu);
}
Status Undo(const StepMtu&, const UndoEnv&, StepEnv&) { return base::Ok(); }  // leaves with the link
Status Validate(const StepMtu&, const StepSite&) { return base::Ok(); }
Status Check(const StepMtu&, CheckEnv&) { return base::Ok(); }  // the result's MTU is checked, not ours

void Fields(JsonFields&, StepUp&) {}
std::string Describe(const StepUp&) { return "set link up"; }
Status Apply(const StepUp&, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  return pod->SetUp(env.pod_index, true);
}
Status Undo(const StepUp&, const UndoEnv&, StepEnv&) { return base::Ok(); }
Status Validate(const StepUp&, const StepSite&) { return base::Ok(); }
Status Check(const StepUp&, CheckEnv&) { return base::Ok(); }  // CHECK wants every interface up

void Fields(JsonFields& f, StepMac& s) { f("mac", s.mac); }
std::string Describe(const StepMac& s) { return "set mac " + s.mac; }
Status Apply(const StepMac& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  RETURN_IF_ERROR(pod->SetMac(env.pod_index, s.mac));
  env.pod_mac = conf::NormalizeMac(s.mac).value_or(s.mac);
  return base::Ok();
}
Status Undo(const StepMac&, const UndoEnv&, StepEnv&) { return base::Ok(); }
Status Validate(const StepMac& s, const StepSite& at) {
  if (!IsMac(s.mac) || s.mac == "00:00:00:00:00:00")
    return BadValue(at.field_prefix + "mac", s.mac, "a MAC, not all zeros");
  return base::Ok();
}
Status Check(const StepMac&, CheckEnv&) { return base::Ok(); }  // the MAC CHECK wants is the result's

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

namespace {

// A device is ours by what ADD recorded of it, never by a name alone: its MAC (or the one the pod gave it),
// its kind when recorded. A MAC of all zeros is lo's (and no device's we move), so it matches nothing.
bool Ours(const DeviceOrigin& o, const std::string& pod_mac, const LinkInfo& l) {
  if (l.mac == "00:00:00:00:00:00") return false;
  if (!o.kind.empty() && l.kind != o.kind) return false;
  return o.mac.empty() || l.mac == o.mac || (!pod_mac.empty() && l.mac == pod_mac);
}

// Handed back when the pod netns died, a device keeps its index, comes back as its pod-side name or "dev<N>",
// and is a physical device (virtual ones die with the netns) unless ADD recorded another kind.
bool CameBack(const DeviceOrigin& o, const std::string& pod_name, const std::string& pod_mac,
              const LinkInfo& l) {
  const std::string& n = l.name;
  const bool returned_name = n == pod_name || (n.size() > 3 && n.starts_with("dev") &&
                                               n.find_first_not_of("0123456789", 3) == std::string::npos);
  return !o.mac.empty() && Ours(o, pod_mac, l) && (!o.kind.empty() || l.kind.empty()) && returned_name &&
         n != o.name && (o.index == 0 || l.index == o.index);
}

}  // namespace

base::Result<std::optional<LinkInfo>> FindHome(const DeviceOrigin& o, const std::string& pod_name,
                                               netlink::Kernel& host, const std::string& pod_mac) {
  ASSIGN_OR_RETURN(auto at_home, host.FindLink(o.name));
  if (at_home && Ours(o, pod_mac, *at_home)) return at_home;
  ASSIGN_OR_RETURN(auto links, host.ListLinks());
  std::optional<LinkInfo> returned;
  for (const auto& l : links)
    if (CameBack(o, pod_name, pod_mac, l)) returned = l;
  return returned;
}

Status MoveHome(const DeviceOrigin& o, const std::string& pod_name, StepEnv& env,
                const std::string& pod_mac) {
  // The node name must be free (or already ours) before anything moves.
  ASSIGN_OR_RETURN(auto at_home, env.host.FindLink(o.name));
  if (at_home && Ours(o, pod_mac, *at_home)) {
    base::Log::Info("device " + o.name + " is already on the node");
    return RestoreOnHost(o, env.host);
  }

  if (env.pod) {
    auto in_pod = env.pod->FindLink(pod_name);
    if (in_pod.ok() && *in_pod && Ours(o, pod_mac, **in_pod)) {
      if (at_home) return NameTaken(o, *at_home);
      Status s = env.pod->MoveLink(**in_pod, env.host, o.name);
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

  // The pod netns died: the kernel returned the device as its pod-side name or devN.
  std::optional<LinkInfo> returned;
  ASSIGN_OR_RETURN(auto links, env.host.ListLinks());
  for (const auto& l : links)
    if (CameBack(o, pod_name, pod_mac, l)) returned = l;
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

#include "cni/core/ip_steps.h"

#include <sys/socket.h>

#include <algorithm>

#include "base/log.h"
#include "cni/core/context.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;
using nlohmann::json;

namespace {

bool SameRoute(const netlink::RouteInfo& want, const netlink::RouteInfo& got) {
  // Metric 0 asks for the kernel's default, which IPv6 turns into 1024.
  return want.dst.Network() == got.dst.Network() && want.table == got.table &&
         (want.metric == 0 || want.metric == got.metric) && want.gateway == got.gateway &&
         want.oif == got.oif;
}

}  // namespace

void Fields(JsonFields& f, netlink::Nexthop& n) { f("oif", n.oif)("weight", n.weight)("gateway", n.gateway); }

void Fields(JsonFields& f, netlink::AddrInfo& a) {
  f("ifindex", a.ifindex)("local", a.local)("scope", a.scope)("flags", a.flags)("broadcast", a.broadcast);
}

void Fields(JsonFields& f, netlink::RouteInfo& r) {
  f("dst", r.dst)("oif", r.oif)("table", r.table)("metric", r.metric)("scope", r.scope);
  f("protocol", r.protocol)("type", r.type)("gateway", r.gateway)("prefsrc", r.prefsrc);
  // Only multipath routes carry legs; older states record none and are single-path.
  if (!f.Has("nexthops", r.nexthops.size() > 1)) return;
  f("nexthops", r.nexthops);
  if (!f.reading() || !f.status().ok()) return;
  if (r.nexthops.size() < 2 || r.nexthops.size() > 256)
    return f.Refuse("route \"nexthops\" must be an array of 2 to 256 legs");
  for (const netlink::Nexthop& n : r.nexthops) {
    if (n.weight < 1 || n.weight > 256) return f.Refuse("a route nexthop's \"weight\" must be 1..256");
    if (n.gateway && n.gateway->family != r.family())
      return f.Refuse("a route nexthop's gateway is of another family");
    if (n.oif == 0 && !n.gateway) return f.Refuse("a route nexthop needs \"oif\" or \"gateway\"");
  }
}

void Fields(JsonFields& f, netlink::RuleInfo& r) {
  uint32_t family = r.family == AF_INET6 ? 6 : 4;
  f("family", family);
  if (f.reading() && f.status().ok() && family != 4 && family != 6) f.Refuse("rule family must be 4 or 6");
  r.family = family == 6 ? AF_INET6 : AF_INET;
  f("priority", r.priority)("table", r.table)("src", r.src);
}

void Fields(JsonFields& f, StepIpam& s) {
  f("type", s.type)("config", s.config);
  if (f.reading() && f.status().ok() && !s.config.is_object()) f.Refuse("ipam step config must be an object");
}
std::string Describe(const StepIpam& s) { return "ipam " + s.type + " add"; }
// Run by the caller: it yields the addresses.
Status Apply(const StepIpam&, const AttachmentState&, StepEnv&) { return base::Ok(); }
Status Undo(const StepIpam& s, const UndoEnv& u, StepEnv& env) {
  if (!env.ipam) return Error(Code::kIpam, "no IPAM executor to release the address");
  auto r = env.ipam->Run(s.type, "DEL", s.config.dump());
  // An unfinished ADD's last step never got IPAM's answer: a plugin that cannot even start now most likely
  // never did, so there is no lease to release, and failing would keep the attachment forever.
  if (!r.ok() && r.error().changed_nothing && !u.state.complete && u.last) {
    base::Log::Warn("IPAM " + s.type + " cannot be run (" + r.error().msg +
                    "); ADD never got its answer, so no address is released");
    return base::Ok();
  }
  if (!r.ok()) return std::move(r).error();
  return base::Ok();
}
Status Validate(const StepIpam& s, const StepSite& at) {
  // DEL execs it as root: the config's rule, or "../../tmp/x" runs.
  if (!conf::IsPlainFileName(s.type))
    return BadValue(at.field_prefix + "type", s.type,
                    "an IPAM plugin file name: no '/', not \".\" or \"..\"");
  if (!s.config.is_object()) return BadValue(at.field_prefix + "config", s.config.dump(), "an object");
  return base::Ok();
}
Status Check(const StepIpam& s, CheckEnv& env) {
  json config = s.config;
  if (env.ctx.cfg.chained()) config["prevResult"] = env.ctx.cfg.prev_result;
  auto r = env.ctx.ipam.Run(s.type, "CHECK", config.dump());
  if (!r.ok()) return std::move(r).error().WithContext("CHECK");
  return base::Ok();
}

void Fields(JsonFields& f, StepAddr& s) { f("addr", s.addr); }
std::string Describe(const StepAddr& s) { return "add address " + s.addr.local.ToString(); }
Status Apply(const StepAddr& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  return pod->AddAddr(s.addr);
}
Status Undo(const StepAddr& s, const UndoEnv&, StepEnv& env) {
  return env.pod ? IgnoreGone(env.pod->DelAddr(s.addr)) : base::Ok();
}
Status Validate(const StepAddr&, const StepSite&) { return base::Ok(); }
Status Check(const StepAddr& s, CheckEnv& env) {
  if (std::any_of(env.addrs.begin(), env.addrs.end(), [&](const auto& g) { return g.local == s.addr.local; }))
    return base::Ok();
  return Mismatch("address " + s.addr.local.ToString() + " is missing from " + env.state.pod_if_name);
}
void BindPodIndex(StepAddr& s, int pod_index) {
  if (pod_index != 0 && s.addr.ifindex == 0) s.addr.ifindex = pod_index;
}

void Fields(JsonFields& f, StepRoute& s) { f("route", s.route); }
std::string Describe(const StepRoute& s) {
  std::string d = "add route " + (s.route.dst.IsDefault() ? std::string("default") : s.route.dst.ToString());
  if (s.route.gateway) d += " via " + s.route.gateway->ToString();
  return d + " table " + std::to_string(s.route.table) + " metric " + std::to_string(s.route.metric);
}
Status Apply(const StepRoute& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  return pod->AddRoute(s.route);
}
Status Undo(const StepRoute& s, const UndoEnv&, StepEnv& env) {
  return env.pod ? IgnoreGone(env.pod->DelRoute(s.route)) : base::Ok();
}
Status Validate(const StepRoute& s, const StepSite& at) {
  if (s.route.table != at.table && s.route.table != 254)
    return BadValue(at.field_prefix + "route", "table " + std::to_string(s.route.table),
                    "a route in table main or the state's table " + std::to_string(at.table));
  return base::Ok();
}
Status Check(const StepRoute& s, CheckEnv& env) {
  netlink::RouteInfo want = s.route;
  want.oif = env.link.index;
  if (std::any_of(env.routes.begin(), env.routes.end(), [&](const auto& g) { return SameRoute(want, g); }))
    return base::Ok();
  return Mismatch("route missing: " + Describe(s));
}
void BindPodIndex(StepRoute& s, int pod_index) {
  if (pod_index != 0 && s.route.oif == 0) s.route.oif = pod_index;
}

void Fields(JsonFields& f, StepRule& s) { f("rule", s.rule); }
std::string Describe(const StepRule& s) {
  return "add rule priority " + std::to_string(s.rule.priority) + " from " +
         (s.rule.src ? s.rule.src->ToString() : std::string("all")) + " lookup " +
         std::to_string(s.rule.table);
}
Status Apply(const StepRule& s, const AttachmentState&, StepEnv& env) {
  ASSIGN_OR_RETURN(netlink::Kernel * pod, PodOf(env));
  return pod->AddRule(s.rule);
}
// Rules belong to the netns, not the device: they stay unless removed.
Status Undo(const StepRule& s, const UndoEnv&, StepEnv& env) {
  return env.pod ? IgnoreGone(env.pod->DelRule(s.rule)) : base::Ok();
}
Status Validate(const StepRule& s, const StepSite& at) {
  // ADD's rules are "from <address> lookup <our table>": DEL must not remove one of the netns's own.
  if (!s.rule.src || s.rule.table != at.table)
    return BadValue(at.field_prefix + "rule", "table " + std::to_string(s.rule.table),
                    "a rule from one address into the state's table " + std::to_string(at.table));
  return base::Ok();
}
Status Check(const StepRule& s, CheckEnv& env) {
  const netlink::RuleInfo& w = s.rule;
  if (std::any_of(env.rules.begin(), env.rules.end(), [&](const netlink::RuleInfo& g) {
        return w.family == g.family && w.priority == g.priority && w.table == g.table && w.src == g.src;
      }))
    return base::Ok();
  return Mismatch("rule missing: " + Describe(s));
}

}  // namespace cni

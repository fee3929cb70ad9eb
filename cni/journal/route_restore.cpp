#include "cni/journal/route_restore.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "cni/journal/journal.h"

namespace cni {

using base::Error;
using base::Result;
using base::Status;
using netlink::Nexthop;
using netlink::RouteInfo;

namespace {

// A single path as a leg, to compare it with a multipath route's legs.
Nexthop LegOf(const RouteInfo& r) { return Nexthop{r.gateway, r.oif, 1}; }

bool SameLeg(const Nexthop& a, const Nexthop& b) { return a.gateway == b.gateway && a.oif == b.oif; }

// What tells routes apart beyond their nexthops; IPv6 routes all list scope universe.
bool SameHead(const RouteInfo& a, const RouteInfo& b) {
  return a.family() == b.family() && a.table == b.table && a.dst == b.dst && a.metric == b.metric &&
         a.type == b.type && a.protocol == b.protocol && a.prefsrc == b.prefsrc &&
         (a.family() == AF_INET6 || a.scope == b.scope);
}

// Both multipath with the same legs (in any order, weights included), or both the same single path.
bool SameLegs(const RouteInfo& a, const RouteInfo& b) {
  if (a.nexthops.size() != b.nexthops.size()) return false;
  if (a.nexthops.empty()) return SameLeg(LegOf(a), LegOf(b));
  return std::is_permutation(a.nexthops.begin(), a.nexthops.end(), b.nexthops.begin());
}

Status AddOrAppend(const RouteInfo& unit, netlink::Kernel& host) {
  Status added = host.AddRoute(unit);
  if (added.ok() || added.error().sys_errno != EEXIST) return added;
  // EEXIST says only that the table has a route of this destination and metric: another device's, or what
  // is left of a multipath route. It is ours only if the kernel lists exactly it.
  ASSIGN_OR_RETURN(auto through, host.ListRoutes(unit.oif));
  if (std::any_of(through.begin(), through.end(), [&](const RouteInfo& r) { return RouteHolds(r, unit); }))
    return base::Ok();
  Status appended = host.AppendRoute(unit);
  // An append refused as existing met a route identical in all the kernel compares: the recorded one.
  if (!appended.ok() && appended.error().sys_errno == EEXIST) return base::Ok();
  return appended;
}

// `unit` without its legs through other devices that are gone or down (the kernel refuses those).
Result<RouteInfo> UsableLegs(const RouteInfo& unit, netlink::Kernel& host) {
  RouteInfo out = unit;
  out.nexthops.clear();
  for (const Nexthop& n : unit.nexthops) {
    bool usable = n.oif == unit.oif;
    if (!usable) {
      ASSIGN_OR_RETURN(auto link, host.FindLinkByIndex(n.oif));
      usable = link && link->up;
    }
    if (usable) out.nexthops.push_back(n);
  }
  if (out.nexthops.size() == 1) {
    out.oif = out.nexthops.front().oif;
    out.gateway = out.nexthops.front().gateway;
    out.nexthops.clear();
  }
  return out;
}

Status RestoreUnit(const RouteInfo& unit, netlink::Kernel& host) {
  Status s = AddOrAppend(unit, host);
  if (s.ok() || unit.nexthops.empty() || (s.error().sys_errno != ENODEV && s.error().sys_errno != ENETDOWN))
    return s;
  // A leg through a device since gone or down would have been dropped had our device never moved: put back
  // what the node can hold rather than fail every DEL until that device returns.
  ASSIGN_OR_RETURN(RouteInfo usable, UsableLegs(unit, host));
  if (usable == unit) return s;
  base::Log::Warn("restoring the multipath route " + unit.dst.ToString() + " table " +
                  std::to_string(unit.table) + " metric " + std::to_string(unit.metric) +
                  " without its legs through devices that are gone or down: " + s.error().msg);
  return AddOrAppend(usable, host);
}

// The kernel's units of restoring `recorded` through the device now at `index`. The kernel dropped an IPv4
// route whole when the device left: one unit. It dropped only an IPv6 multipath route's legs through the
// device, each a route of its own: one unit per leg.
std::vector<RouteInfo> RestoreUnits(const RouteInfo& recorded, int index) {
  RouteInfo r = recorded;
  const int old = recorded.oif;
  for (Nexthop& n : r.nexthops)
    if (n.oif == old) n.oif = index;
  r.oif = index;
  if (r.family() != AF_INET6 || r.nexthops.size() < 2) return {r};
  // Only the legs through the device left with it; one of the others that is gone was removed on purpose.
  std::vector<RouteInfo> units;
  for (const Nexthop& n : r.nexthops) {
    if (n.oif != index) continue;
    RouteInfo leg = r;
    leg.nexthops.clear();
    leg.oif = n.oif;
    leg.gateway = n.gateway;
    units.push_back(leg);
  }
  return units;
}

}  // namespace

bool RouteHolds(const RouteInfo& have, const RouteInfo& want) {
  if (!SameHead(have, want)) return false;
  if (SameLegs(have, want)) return true;
  if (want.family() != AF_INET6 || !want.nexthops.empty()) return false;
  const Nexthop leg = LegOf(want);
  return std::any_of(have.nexthops.begin(), have.nexthops.end(),
                     [&](const Nexthop& n) { return SameLeg(n, leg); });
}

Status RestoreRoutes(const std::vector<RouteInfo>& routes, int index, netlink::Kernel& host) {
  std::vector<RouteInfo> pending;
  for (const RouteInfo& r : routes)
    for (RouteInfo& unit : RestoreUnits(r, index)) pending.push_back(std::move(unit));
  std::vector<Error> errors;
  std::vector<Error> unreachable;
  while (!pending.empty()) {
    std::vector<RouteInfo> retry;
    unreachable.clear();
    for (const auto& r : pending) {
      Status s = RestoreUnit(r, host);
      if (s.ok()) continue;
      // A gateway not reachable yet: IPv4 says ENETUNREACH, IPv6 EHOSTUNREACH.
      const bool later = s.error().sys_errno == ENETUNREACH || s.error().sys_errno == EHOSTUNREACH;
      if (later) retry.push_back(r);
      (later ? unreachable : errors).push_back(std::move(s).error());
    }
    if (retry.size() == pending.size()) break;
    pending = std::move(retry);
  }
  errors.insert(errors.end(), unreachable.begin(), unreachable.end());
  if (!errors.empty()) return JoinErrors(errors, "restoring routes");
  return base::Ok();
}

}  // namespace cni

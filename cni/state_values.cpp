// JSON of the kernel value types a state journals (addresses, routes,
// rules, VF settings), and back.
#include <sys/socket.h>

#include <cstdint>

#include "cni/state.h"
#include "cni/state_fields.h"

namespace cni {

using base::Result;
using nlohmann::json;
using state_fields::Bad;
using state_fields::Bool;
using state_fields::OptAddr;
using state_fields::Prefix;
using state_fields::Str;
using state_fields::Uint;

void WriteJson(base::JsonWriter& w, const netlink::AddrInfo& a) {
  w.BeginObject().Int("ifindex", a.ifindex).Str("local", a.local.ToString()).Uint("scope", a.scope);
  w.Uint("flags", a.flags);
  if (a.broadcast) w.Str("broadcast", a.broadcast->ToString());
  w.EndObject();
}

void WriteJson(base::JsonWriter& w, const netlink::RouteInfo& r) {
  w.BeginObject().Str("dst", r.dst.ToString()).Int("oif", r.oif).Uint("table", r.table);
  w.Uint("metric", r.metric).Uint("scope", r.scope).Uint("protocol", r.protocol).Uint("type", r.type);
  if (r.gateway) w.Str("gateway", r.gateway->ToString());
  if (r.prefsrc) w.Str("prefsrc", r.prefsrc->ToString());
  // Only multipath routes carry their legs; states written before legs were
  // recorded have none and are single-path routes.
  if (r.nexthops.size() > 1) {
    w.Key("nexthops").BeginArray();
    for (const netlink::Nexthop& n : r.nexthops) {
      w.BeginObject().Int("oif", n.oif).Uint("weight", n.weight);
      if (n.gateway) w.Str("gateway", n.gateway->ToString());
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteJson(base::JsonWriter& w, const netlink::RuleInfo& r) {
  w.BeginObject().Uint("family", r.family == AF_INET6 ? 6 : 4).Uint("priority", r.priority);
  w.Uint("table", r.table);
  if (r.src) w.Str("src", r.src->ToString());
  w.EndObject();
}

void WriteJson(base::JsonWriter& w, const netlink::VfSettings& v) {
  w.BeginObject().Uint("vf", v.vf);
  if (v.mac) w.Str("mac", *v.mac);
  if (v.vlan) w.Uint("vlan", v.vlan->vlan).Uint("qos", v.vlan->qos);
  if (v.rate) w.Uint("minTxRate", v.rate->min_tx_rate).Uint("maxTxRate", v.rate->max_tx_rate);
  if (v.spoofchk) w.Bool("spoofchk", *v.spoofchk);
  if (v.trust) w.Bool("trust", *v.trust);
  if (v.link_state) w.Uint("linkState", *v.link_state);
  if (v.node_guid) w.Str("nodeGuid", *v.node_guid);
  if (v.port_guid) w.Str("portGuid", *v.port_guid);
  w.EndObject();
}

Result<netlink::VfSettings> VfSettingsFromJson(const json& j) {
  netlink::VfSettings v;
  auto u32 = [&](const char* key) -> Result<uint32_t> {
    ASSIGN_OR_RETURN(uint64_t n, Uint(j, key));
    if (n > UINT32_MAX) return Bad(std::string("\"") + key + "\" is out of range");
    return static_cast<uint32_t>(n);
  };
  ASSIGN_OR_RETURN(v.vf, u32("vf"));
  if (j.contains("mac")) {
    ASSIGN_OR_RETURN(v.mac, Str(j, "mac"));
  }
  if (j.contains("vlan")) {
    netlink::VfVlan vlan;
    ASSIGN_OR_RETURN(vlan.vlan, u32("vlan"));
    ASSIGN_OR_RETURN(vlan.qos, u32("qos"));
    v.vlan = vlan;
  }
  if (j.contains("minTxRate")) {
    netlink::VfRate rate;
    ASSIGN_OR_RETURN(rate.min_tx_rate, u32("minTxRate"));
    ASSIGN_OR_RETURN(rate.max_tx_rate, u32("maxTxRate"));
    v.rate = rate;
  }
  if (j.contains("spoofchk")) {
    ASSIGN_OR_RETURN(v.spoofchk, Bool(j, "spoofchk"));
  }
  if (j.contains("trust")) {
    ASSIGN_OR_RETURN(v.trust, Bool(j, "trust"));
  }
  if (j.contains("linkState")) {
    ASSIGN_OR_RETURN(v.link_state, u32("linkState"));
  }
  if (j.contains("nodeGuid")) {
    ASSIGN_OR_RETURN(v.node_guid, Str(j, "nodeGuid"));
  }
  if (j.contains("portGuid")) {
    ASSIGN_OR_RETURN(v.port_guid, Str(j, "portGuid"));
  }
  return v;
}

Result<netlink::AddrInfo> AddrFromJson(const json& j) {
  netlink::AddrInfo a;
  ASSIGN_OR_RETURN(uint64_t ifindex, Uint(j, "ifindex"));
  a.ifindex = static_cast<int>(ifindex);
  ASSIGN_OR_RETURN(a.local, Prefix(j, "local"));
  ASSIGN_OR_RETURN(uint64_t scope, Uint(j, "scope"));
  a.scope = static_cast<uint8_t>(scope);
  ASSIGN_OR_RETURN(uint64_t flags, Uint(j, "flags"));
  a.flags = static_cast<uint32_t>(flags);
  ASSIGN_OR_RETURN(a.broadcast, OptAddr(j, "broadcast"));
  return a;
}

namespace {

// The legs of a multipath route: two or more, each with a device or a
// gateway of the route's family, a weight the kernel can carry.
Result<std::vector<netlink::Nexthop>> NexthopsFromJson(const json& legs, int family) {
  constexpr size_t kMaxLegs = 256;
  if (!legs.is_array() || legs.size() < 2 || legs.size() > kMaxLegs)
    return Bad("route \"nexthops\" must be an array of 2 to 256 legs");
  std::vector<netlink::Nexthop> out;
  for (const json& leg : legs) {
    if (!leg.is_object()) return Bad("a route nexthop must be an object");
    netlink::Nexthop n;
    ASSIGN_OR_RETURN(uint64_t oif, Uint(leg, "oif"));
    ASSIGN_OR_RETURN(uint64_t weight, Uint(leg, "weight"));
    if (oif > INT32_MAX) return Bad("a route nexthop's \"oif\" is out of range");
    if (weight < 1 || weight > 256) return Bad("a route nexthop's \"weight\" must be 1..256");
    ASSIGN_OR_RETURN(n.gateway, OptAddr(leg, "gateway"));
    if (n.gateway && n.gateway->family != family)
      return Bad("a route nexthop's gateway is of another family");
    if (oif == 0 && !n.gateway) return Bad("a route nexthop needs \"oif\" or \"gateway\"");
    n.oif = static_cast<int>(oif);
    n.weight = static_cast<uint32_t>(weight);
    out.push_back(n);
  }
  return out;
}

}  // namespace

Result<netlink::RouteInfo> RouteFromJson(const json& j) {
  netlink::RouteInfo r;
  ASSIGN_OR_RETURN(r.dst, Prefix(j, "dst"));
  ASSIGN_OR_RETURN(uint64_t oif, Uint(j, "oif"));
  r.oif = static_cast<int>(oif);
  ASSIGN_OR_RETURN(uint64_t table, Uint(j, "table"));
  r.table = static_cast<uint32_t>(table);
  ASSIGN_OR_RETURN(uint64_t metric, Uint(j, "metric"));
  r.metric = static_cast<uint32_t>(metric);
  ASSIGN_OR_RETURN(uint64_t scope, Uint(j, "scope"));
  r.scope = static_cast<uint8_t>(scope);
  ASSIGN_OR_RETURN(uint64_t protocol, Uint(j, "protocol"));
  r.protocol = static_cast<uint8_t>(protocol);
  ASSIGN_OR_RETURN(uint64_t type, Uint(j, "type"));
  r.type = static_cast<uint8_t>(type);
  ASSIGN_OR_RETURN(r.gateway, OptAddr(j, "gateway"));
  ASSIGN_OR_RETURN(r.prefsrc, OptAddr(j, "prefsrc"));
  if (j.contains("nexthops")) {
    ASSIGN_OR_RETURN(r.nexthops, NexthopsFromJson(j.at("nexthops"), r.family()));
  }
  return r;
}

Result<netlink::RuleInfo> RuleFromJson(const json& j) {
  netlink::RuleInfo r;
  ASSIGN_OR_RETURN(uint64_t family, Uint(j, "family"));
  if (family != 4 && family != 6) return Bad("rule family must be 4 or 6");
  r.family = family == 6 ? AF_INET6 : AF_INET;
  ASSIGN_OR_RETURN(uint64_t prio, Uint(j, "priority"));
  r.priority = static_cast<uint32_t>(prio);
  ASSIGN_OR_RETURN(uint64_t table, Uint(j, "table"));
  r.table = static_cast<uint32_t>(table);
  if (j.contains("src")) {
    ASSIGN_OR_RETURN(auto src, Prefix(j, "src"));
    r.src = src;
  }
  return r;
}

}  // namespace cni

#include "cni/result.h"

#include <sys/socket.h>

#include <utility>

#include "conf/version.h"

namespace cni {
namespace {

using base::Code;
using base::Error;
using nlohmann::json;

bool AtLeast(const std::string& version, const char* min) { return conf::CompareVersions(version, min) >= 0; }

/// r[key] as an array, created when absent or null. A prevResult that holds
/// something else there is malformed; ours replaces it rather than fail ADD.
json& ArrayMember(json& r, const char* key) {
  auto it = r.find(key);
  if (it == r.end() || !it->is_array()) r[key] = json::array();
  return r[key];
}

json InterfaceJson(const ResultInterface& iface) {
  json j = {{"name", iface.name}};
  if (!iface.mac.empty()) j["mac"] = iface.mac;
  if (!iface.sandbox.empty()) j["sandbox"] = iface.sandbox;
  if (iface.mtu) j["mtu"] = *iface.mtu;                                 // ConvertResult drops it before 1.1.0
  if (!iface.rdma_device.empty()) j["rdmaDevice"] = iface.rdma_device;  // likewise
  if (!iface.pci_id.empty()) j["pciID"] = iface.pci_id;                 // likewise
  return j;
}

json RouteJson(const ResultRoute& route) {
  json j = {{"dst", route.dst.ToString()}};
  if (route.gw) j["gw"] = route.gw->ToString();
  if (route.priority) j["priority"] = *route.priority;
  if (route.table) j["table"] = *route.table;
  if (route.scope) j["scope"] = *route.scope;
  return j;
}

/// Makes `s` valid UTF-8 (invalid sequences become U+FFFD) so that dumping the
/// error object cannot throw; kernel text and device names are raw bytes.
std::string ValidUtf8(const std::string& s) {
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

Error Garbage(std::string msg, const json& result) {
  return Error(Code::kIpam, "IPAM result: " + std::move(msg),
               result.dump(-1, ' ', false, json::error_handler_t::replace));
}

/// One address entry: `addr_key` holds "addr/len", `gateway` is optional and
/// must be of the same family.
base::Result<ResultIp> ParseIpEntry(const json& entry, const std::string& path, const char* addr_key,
                                    int want_family, const json& result) {
  if (!entry.is_object()) return Garbage(path + ": must be an object", result);
  auto a = entry.find(addr_key);
  std::optional<netlink::IpPrefix> prefix;
  if (a != entry.end() && a->is_string()) prefix = netlink::IpPrefix::Parse(a->get<std::string>());
  if (!prefix)
    return Garbage(path + "." + addr_key +
                       ": must be an address with a prefix length, such as "
                       "\"10.9.0.5/24\"",
                   result);
  if (want_family != 0 && prefix->addr.family != want_family)
    return Garbage(path + "." + addr_key + ": " + prefix->ToString() + " is of the wrong family", result);
  ResultIp ip{*prefix, std::nullopt};
  auto g = entry.find("gateway");
  if (g != entry.end() && !g->is_null()) {
    std::optional<netlink::IpAddress> gw;
    if (g->is_string()) gw = netlink::IpAddress::Parse(g->get<std::string>());
    if (!gw || gw->family != prefix->addr.family)
      return Garbage(path + ".gateway: must be an address of the same family as " + prefix->ToString(),
                     result);
    ip.gateway = *gw;
  }
  return ip;
}

}  // namespace

json AppendToResult(const json& prev, const std::string& version, const ResultInterface& iface,
                    const std::vector<ResultIp>& ips, const std::vector<ResultRoute>& routes) {
  json r = prev.is_object() ? prev
                            : json{{"cniVersion", version},
                                   {"interfaces", json::array()},
                                   {"ips", json::array()},
                                   {"routes", json::array()},
                                   {"dns", json::object()}};
  json& interfaces = ArrayMember(r, "interfaces");
  const size_t index = interfaces.size();
  interfaces.push_back(InterfaceJson(iface));

  if (!ips.empty()) {
    json& out = ArrayMember(r, "ips");
    for (const auto& ip : ips) {
      json j = {{"address", ip.address.ToString()}};
      if (ip.gateway) j["gateway"] = ip.gateway->ToString();
      j["interface"] = index;
      out.push_back(std::move(j));
    }
  }
  const bool tables = AtLeast(version, "1.1.0");
  bool any_route = false;
  for (const auto& route : routes) any_route |= tables || !route.table;
  if (any_route) {
    json& out = ArrayMember(r, "routes");
    for (const auto& route : routes) {
      // Before 1.1.0 a route cannot say which table it is in; reporting it
      // would claim a main-table route that does not exist.
      if (route.table && !tables) continue;
      out.push_back(RouteJson(route));
    }
  }
  return ConvertResult(std::move(r), version);
}

json ConvertResult(json result, const std::string& version) {
  if (!result.is_object()) return result;
  result["cniVersion"] = version;
  const bool want_ip_version = !AtLeast(version, "1.0.0");
  const bool keep_1_1 = AtLeast(version, "1.1.0");

  if (auto ips = result.find("ips"); ips != result.end() && ips->is_array()) {
    for (auto& ip : *ips) {
      if (!ip.is_object()) continue;
      if (!want_ip_version) {
        ip.erase("version");
        continue;
      }
      auto a = ip.find("address");
      if (a == ip.end() || !a->is_string()) continue;
      if (auto p = netlink::IpPrefix::Parse(a->get<std::string>(), /*allow_bare=*/true))
        ip["version"] = p->addr.family == AF_INET6 ? "6" : "4";
    }
  }
  if (!keep_1_1) {
    if (auto routes = result.find("routes"); routes != result.end() && routes->is_array()) {
      for (auto& route : *routes) {
        if (!route.is_object()) continue;
        for (const char* k : {"mtu", "advmss", "priority", "table", "scope"}) route.erase(k);
      }
    }
    if (auto ifs = result.find("interfaces"); ifs != result.end() && ifs->is_array()) {
      for (auto& iface : *ifs) {
        if (!iface.is_object()) continue;
        for (const char* k : {"mtu", "socketPath", "pciID", "rdmaDevice"}) iface.erase(k);
      }
    }
  }
  return result;
}

base::Result<std::vector<ResultIp>> ParseIpamIps(const json& r) {
  if (!r.is_object()) return Garbage(std::string("must be a JSON object, got ") + r.type_name(), r);
  // A plugin that printed its error object but exited 0.
  if (r.contains("code") && r.contains("msg") && !r.contains("ips")) {
    const json& msg = r["msg"];
    return Error(Code::kIpam,
                 "IPAM plugin reported error " + r["code"].dump() + ": " +
                     (msg.is_string() ? msg.get<std::string>() : msg.dump()),
                 r.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  std::vector<ResultIp> out;
  auto ips = r.find("ips");
  if (ips != r.end() && !ips->is_null()) {
    if (!ips->is_array()) return Garbage("ips: must be an array", r);
    for (size_t i = 0; i < ips->size(); ++i) {
      ASSIGN_OR_RETURN(ResultIp ip,
                       ParseIpEntry((*ips)[i], "ips[" + std::to_string(i) + "]", "address", 0, r));
      out.push_back(ip);
    }
    return out;
  }
  // 0.1.0/0.2.0 results: {"ip4": {"ip": "10.1.0.5/24", "gateway": ...}, "ip6": {...}}.
  for (auto [key, family] : {std::pair{"ip4", AF_INET}, std::pair{"ip6", AF_INET6}}) {
    auto e = r.find(key);
    if (e == r.end() || e->is_null()) continue;
    ASSIGN_OR_RETURN(ResultIp ip, ParseIpEntry(*e, key, "ip", family, r));
    out.push_back(ip);
  }
  return out;
}

json ErrorJson(const std::string& version, const base::Error& e) {
  json j = {{"cniVersion", version}, {"code", static_cast<int>(e.code)}, {"msg", ValidUtf8(e.msg)}};
  if (!e.details.empty()) j["details"] = ValidUtf8(e.details);
  return j;
}

}  // namespace cni

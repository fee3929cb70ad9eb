#include "cni/command/result.h"

#include <sys/socket.h>

#include <utility>

#include "base/log.h"
#include "conf/version.h"

namespace cni {
namespace {

using nlohmann::json;

/// r[key] as an array, replacing whatever else a (malformed) prevResult holds there.
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

/// `s` as valid UTF-8 (invalid sequences become U+FFFD), so that dumping the error object cannot throw.
std::string ValidUtf8(const std::string& s) {
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
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
  const bool tables = conf::CompareVersions(version, "1.1.0") >= 0;
  bool any_route = false;
  for (const auto& route : routes) any_route |= tables || !route.table;
  if (any_route) {
    json& out = ArrayMember(r, "routes");
    for (const auto& route : routes) {
      // Before 1.1.0 a route cannot name its table: it would claim a main-table route.
      if (route.table && !tables) continue;
      out.push_back(RouteJson(route));
    }
  }
  return conf::ConvertResult(std::move(r), version);
}

json ErrorJson(const std::string& version, const base::Error& e) {
  // What an error echoes of the input (a key, a value) is bounded.
  json j = {{"cniVersion", version},
            {"code", static_cast<int>(e.code)},
            {"msg", ValidUtf8(base::Cut(e.msg, kMaxErrorTextBytes))}};
  if (!e.details.empty()) j["details"] = ValidUtf8(base::Cut(e.details, kMaxErrorTextBytes));
  return j;
}

}  // namespace cni

#include "ipam/ipam_result.h"

#include <sys/socket.h>

#include <utility>

namespace ipam {

using base::Code;
using base::Error;
using nlohmann::json;

namespace {

Error Garbage(std::string msg, const json& result) {
  return Error(Code::kIpam, "IPAM result: " + std::move(msg),
               result.dump(-1, ' ', false, json::error_handler_t::replace));
}

/// One address entry: `addr_key` holds "addr/len", `gateway` is optional and must be of the same family.
base::Result<IpConfig> ParseIpEntry(const json& entry, const std::string& path, const char* addr_key,
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
  IpConfig ip{*prefix, std::nullopt};
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

base::Result<std::vector<IpConfig>> ParseResult(const json& r) {
  if (!r.is_object()) return Garbage(std::string("must be a JSON object, got ") + r.type_name(), r);
  // A plugin that printed its error object but exited 0.
  if (r.contains("code") && r.contains("msg") && !r.contains("ips")) {
    const json& msg = r["msg"];
    return Error(Code::kIpam,
                 "IPAM plugin reported error " + r["code"].dump() + ": " +
                     (msg.is_string() ? msg.get<std::string>() : msg.dump()),
                 r.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  std::vector<IpConfig> out;
  auto ips = r.find("ips");
  if (ips != r.end() && !ips->is_null()) {
    if (!ips->is_array()) return Garbage("ips: must be an array", r);
    for (size_t i = 0; i < ips->size(); ++i) {
      ASSIGN_OR_RETURN(IpConfig ip,
                       ParseIpEntry((*ips)[i], "ips[" + std::to_string(i) + "]", "address", 0, r));
      out.push_back(ip);
    }
    return out;
  }
  // 0.1.0/0.2.0 results: {"ip4": {"ip": "10.1.0.5/24", "gateway": ...}, "ip6": {...}}.
  for (auto [key, family] : {std::pair{"ip4", AF_INET}, std::pair{"ip6", AF_INET6}}) {
    auto e = r.find(key);
    if (e == r.end() || e->is_null()) continue;
    ASSIGN_OR_RETURN(IpConfig ip, ParseIpEntry(*e, key, "ip", family, r));
    out.push_back(ip);
  }
  return out;
}

base::Result<std::vector<IpConfig>> AddressesOf(const json& result) {
  ASSIGN_OR_RETURN(auto ips, ParseResult(result));
  if (ips.empty()) return Error(Code::kIpam, "ipam returned no IP addresses");
  return ips;
}

}  // namespace ipam

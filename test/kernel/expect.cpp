// Assertions shared by the plugin tests: error objects and attachments.
#include <algorithm>
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace kt {

using nlohmann::json;

void CheckError(const PluginResult& r, int code, const std::vector<std::string>& msg_any) {
  INFO(Describe(r));
  CHECK(r.exit != 0);
  CHECK_FALSE(r.timed_out);
  REQUIRE(r.json.is_object());
  CHECK(r.json.contains("cniVersion"));
  CHECK(r.json.value("cniVersion", json()).is_string());
  CHECK(r.json.value("code", -1) == code);
  std::string msg = r.json.value("msg", "");
  CHECK_FALSE(msg.empty());
  if (!msg_any.empty()) {
    bool named = std::any_of(msg_any.begin(), msg_any.end(),
                             [&](const std::string& p) { return msg.find(p) != std::string::npos; });
    INFO("msg should contain one of the expected words");
    CHECK(named);
  }
}

ShResult Ping(const std::string& netns, const std::string& from, const std::string& to) {
  std::string fam = to.find(':') == std::string::npos ? "-4" : "-6";
  return Sh("ip netns exec " + netns + " ping " + fam + " -n -c1 -W2 -I " + from + " " + to);
}

long CheckAttached(const std::string& pod, const Attached& a) {
  const int fam = a.addr.find(':') == std::string::npos ? 4 : 6;
  const std::string off = fam == 4 ? kOffSubnetTarget : kOffSubnetTarget6;
  INFO("pod " << pod << " dev " << a.dev << " addr " << a.addr);

  json link = LinkJson(pod, a.dev);
  REQUIRE(link.is_object());
  json flags = link.value("flags", json::array());
  CHECK(std::find(flags.begin(), flags.end(), "UP") != flags.end());
  if (!a.mac.empty()) CHECK(link.value("address", "") == a.mac);
  if (a.mtu) CHECK(link.value("mtu", 0) == *a.mtu);

  auto addrs = Addresses(pod, a.dev, fam);
  CHECK(std::find(addrs.begin(), addrs.end(), a.addr + "/" + std::to_string(a.prefix)) != addrs.end());

  // Main table: the subnet route at routeMetric only (the kernel's metric-0
  // IPv4 / metric-256 IPv6 prefix route would outrank the primary NIC), and
  // no default route through our interface.
  int subnet_routes = 0;
  for (const auto& r : Routes(pod, "main", fam)) {
    if (r.value("dev", "") != a.dev) continue;
    CHECK(r.value("dst", "") != "default");
    if (r.value("dst", "") == a.subnet) {
      ++subnet_routes;
      CHECK(r.value("metric", 0U) == a.route_metric);
    }
  }
  CHECK(subnet_routes == 1);

  long prio = -1;
  long table = RuleTable(pod, a.addr, fam, &prio);
  CHECK(table >= 200);
  CHECK(table != 253);
  CHECK(table != 254);
  CHECK(table != 255);
  CHECK(prio == static_cast<long>(a.rule_priority));
  if (table < 0) return table;

  bool has_subnet = false, has_default = false;
  for (const auto& r : Routes(pod, std::to_string(table), fam)) {
    if (r.value("dev", "") != a.dev) continue;
    if (r.value("dst", "") == a.subnet) has_subnet = true;
    if (r.value("dst", "") == "default" && r.value("gateway", "") == a.gateway) has_default = true;
  }
  CHECK(has_subnet);
  CHECK(has_default);

  // The kernel's own answer: traffic from our address to something off the
  // subnet leaves through the policy table via the gateway.
  json got = RouteGet(pod, off, a.addr);
  INFO("ip route get " << off << " from " << a.addr << " = " << got.dump());
  REQUIRE(got.is_object());
  CHECK(got.value("table", "main") == std::to_string(table));
  CHECK(got.value("gateway", "") == a.gateway);
  CHECK(got.value("dev", "") == a.dev);

  ShResult p1 = Ping(pod, a.addr, a.gateway);
  INFO(p1.out << p1.err);
  CHECK(p1.exit == 0);
  ShResult p2 = Ping(pod, a.addr, off);
  INFO(p2.out << p2.err);
  CHECK(p2.exit == 0);
  return table;
}

json FindIp(const json& result, const std::string& addr) {
  for (const auto& ip : result.value("ips", json::array())) {
    if (ip.value("address", "") == addr) return ip;
  }
  return nullptr;
}

}  // namespace kt

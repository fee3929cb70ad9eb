// The node routes a state records for DEL to put back: multipath routes keep
// their legs, routes written before legs were recorded read as single paths,
// and legs that no kernel could have listed are refused.
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <functional>

#include "cni/state/state.h"

namespace test_unit_state_routes_test {

namespace {

using nlohmann::json;

netlink::IpPrefix P(const char* s) { return *netlink::IpPrefix::Parse(s); }
netlink::IpAddress A(const char* s) { return *netlink::IpAddress::Parse(s); }

json Written(netlink::RouteInfo r) {
  json j = json::object();
  cni::JsonFields f(j);
  cni::Fields(f, r);
  return json::parse(j.dump());
}

base::Result<netlink::RouteInfo> Read(const json& j) {
  netlink::RouteInfo r;
  cni::JsonFields f(j);
  cni::Fields(f, r);
  if (!f.status().ok()) return f.status().error();
  return r;
}

netlink::RouteInfo Multipath() {
  netlink::RouteInfo r;
  r.dst = P("198.51.100.0/24");
  r.oif = 8;
  r.gateway = A("10.9.0.1");
  r.protocol = netlink::kProtoBoot;
  r.nexthops = {{A("10.9.0.1"), 7, 1}, {A("10.9.0.1"), 8, 3}};
  return r;
}

}  // namespace

TEST_CASE("a multipath route keeps every leg and weight through the state file", "[state][routes]") {
  const netlink::RouteInfo r = Multipath();
  const json j = Written(r);
  REQUIRE(j.contains("nexthops"));
  CHECK(j["nexthops"][1] == json{{"oif", 8}, {"weight", 3}, {"gateway", "10.9.0.1"}});
  auto back = Read(j);
  REQUIRE(back.ok());
  CHECK(*back == r);
}

TEST_CASE("a state route without legs, as format 1 wrote every route, reads as a single path",
          "[state][routes]") {
  const json old = json::parse(R"({"dst":"0.0.0.0/0","oif":7,"table":254,"metric":200,"scope":0,
                                   "protocol":3,"type":1,"gateway":"10.9.0.1"})");
  auto r = Read(old);
  REQUIRE(r.ok());
  CHECK(r->nexthops.empty());
  CHECK(r->oif == 7);
  // And a single path is written as before: no legs.
  CHECK_FALSE(Written(*r).contains("nexthops"));
}

TEST_CASE("state route legs that no kernel lists are refused, naming the member", "[state][routes]") {
  const json good = Written(Multipath());
  auto refused = [&](const std::function<void(json&)>& spoil, const std::string& says) {
    json j = good;
    spoil(j);
    auto r = Read(j);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Code::kState);
    CHECK_THAT(r.error().msg, Catch::Contains(says));
  };
  refused([](json& j) { j["nexthops"] = json::array({j["nexthops"][0]}); }, "nexthops");
  refused([](json& j) { j["nexthops"] = "7"; }, "nexthops");
  refused([](json& j) { j["nexthops"] = json::array({1, 2}); }, "nexthop");
  refused([](json& j) { j["nexthops"][0]["weight"] = 0; }, "weight");
  refused([](json& j) { j["nexthops"][0]["weight"] = 257; }, "weight");
  refused([](json& j) { j["nexthops"][0]["oif"] = 1ull << 32; }, "oif");
  refused([](json& j) { j["nexthops"][0]["gateway"] = "fd00::1"; }, "family");
  refused([](json& j) { j["nexthops"][0] = json{{"oif", 0}, {"weight", 1}}; }, "oif");
  refused(
      [](json& j) {
        j["nexthops"] = json::array({j["nexthops"][0]});
        j["nexthops"].insert(j["nexthops"].end(), 300, j["nexthops"][0]);
      },
      "nexthops");
}

}  // namespace test_unit_state_routes_test

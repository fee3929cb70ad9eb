#include "cni/command/result.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "conf/version.h"
#include "ipam/ipam_result.h"

namespace test_unit_result_test {

namespace {

using base::Code;
using cni::ResultInterface;
using cni::ResultIp;
using cni::ResultRoute;
using nlohmann::json;

netlink::IpPrefix Prefix(const char* s) { return *netlink::IpPrefix::Parse(s); }
netlink::IpAddress Addr(const char* s) { return *netlink::IpAddress::Parse(s); }

bool Before(const std::string& v, const char* than) { return conf::CompareVersions(v, than) < 0; }

const char* kContainerId = "5b7a9a1e0c3d4f2a8e6b1c0d9f8e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f";

/// What Terway hands us as prevResult: interfaces[0].sandbox is the container
/// ID, not a netns path, and there is no mac. Shaped for `version`.
json TerwayPrev(const std::string& version) {
  json prev = {
      {"cniVersion", version},
      {"interfaces", {{{"name", "eth0"}, {"sandbox", kContainerId}}}},
      {"ips", {{{"address", "172.16.0.10/24"}, {"gateway", "172.16.0.253"}, {"interface", 0}}}},
      {"routes", {{{"dst", "0.0.0.0/0"}, {"gw", "172.16.0.253"}}}},
      {"dns", {{"nameservers", {"10.96.0.10"}}, {"search", {"svc.cluster.local"}}}},
  };
  if (Before(version, "1.0.0")) prev["ips"][0]["version"] = "4";
  return prev;
}

ResultInterface OurInterface() {
  return {"erdma0", "02:00:00:3b:00:01", "/var/run/netns/p", 9000, "erdma_0", "0000:3b:00.2"};
}

std::vector<ResultIp> OurIps() {
  return {{Prefix("10.9.0.5/24"), Addr("10.9.0.1")}, {Prefix("fd00::5/64"), std::nullopt}};
}

std::vector<ResultRoute> OurRoutes() {
  return {
      {Prefix("10.10.0.0/16"), Addr("10.9.0.1"), std::nullopt, std::nullopt, std::nullopt},
      {Prefix("0.0.0.0/0"), Addr("10.9.0.1"), 200u, 1000u, std::nullopt},
      {Prefix("10.9.0.0/24"), std::nullopt, std::nullopt, std::nullopt, uint8_t{253}},
  };
}

TEST_CASE("appending to no prevResult builds a complete result in every version") {
  const std::string v = GENERATE(from_range(conf::SupportedVersions()));
  INFO(v);
  json r = cni::AppendToResult(nullptr, v, OurInterface(), OurIps(), OurRoutes());

  json want = {
      {"cniVersion", v},
      {"interfaces", {{{"name", "erdma0"}, {"mac", "02:00:00:3b:00:01"}, {"sandbox", "/var/run/netns/p"}}}},
      {"ips",
       {{{"address", "10.9.0.5/24"}, {"gateway", "10.9.0.1"}, {"interface", 0}},
        {{"address", "fd00::5/64"}, {"interface", 0}}}},
      {"routes", {{{"dst", "10.10.0.0/16"}, {"gw", "10.9.0.1"}}}},
      {"dns", json::object()},
  };
  if (Before(v, "1.0.0")) {
    want["ips"][0]["version"] = "4";
    want["ips"][1]["version"] = "6";
  }
  if (!Before(v, "1.1.0")) {
    want["interfaces"][0]["mtu"] = 9000;
    want["interfaces"][0]["rdmaDevice"] = "erdma_0";
    want["interfaces"][0]["pciID"] = "0000:3b:00.2";
    want["routes"].push_back({{"dst", "0.0.0.0/0"}, {"gw", "10.9.0.1"}, {"priority", 200}, {"table", 1000}});
    want["routes"].push_back({{"dst", "10.9.0.0/24"}, {"scope", 253}});
  } else {
    // The scope-only route survives as a plain route; the table route is dropped.
    want["routes"].push_back({{"dst", "10.9.0.0/24"}});
  }
  CHECK(r == want);
}

TEST_CASE("appending to a Terway prevResult loses nothing of it in every version") {
  const std::string v = GENERATE(from_range(conf::SupportedVersions()));
  INFO(v);
  json prev = TerwayPrev(v);
  prev["terwayExtra"] = {{"eni", "eni-123"}};
  json r = cni::AppendToResult(prev, v, OurInterface(), OurIps(), OurRoutes());

  REQUIRE(r["interfaces"].size() == 2);
  CHECK(r["interfaces"][0] == prev["interfaces"][0]);
  CHECK(r["interfaces"][1]["name"] == "erdma0");
  CHECK(r["interfaces"][1].contains("mtu") == !Before(v, "1.1.0"));
  CHECK(r["interfaces"][1].contains("rdmaDevice") == !Before(v, "1.1.0"));
  CHECK(r["interfaces"][1].contains("pciID") == !Before(v, "1.1.0"));

  REQUIRE(r["ips"].size() == 3);
  CHECK(r["ips"][0] == prev["ips"][0]);
  CHECK(r["ips"][1]["address"] == "10.9.0.5/24");
  CHECK(r["ips"][1]["interface"] == 1);
  CHECK(r["ips"][2]["interface"] == 1);
  CHECK(r["ips"][1].contains("version") == Before(v, "1.0.0"));
  if (Before(v, "1.0.0")) CHECK(r["ips"][2]["version"] == "6");

  CHECK(r["routes"][0] == prev["routes"][0]);
  bool has_table_route = false;
  for (const auto& route : r["routes"]) has_table_route |= route.contains("table");
  CHECK(has_table_route == !Before(v, "1.1.0"));

  CHECK(r["dns"] == prev["dns"]);
  CHECK(r["terwayExtra"] == prev["terwayExtra"]);
  CHECK(r["cniVersion"] == v);
}

TEST_CASE("appending to a prevResult without arrays creates only what it needs") {
  const std::string v = GENERATE(from_range(conf::SupportedVersions()));
  INFO(v);
  json prev = {{"cniVersion", v}, {"dns", {{"domain", "x"}}}};
  json r = cni::AppendToResult(prev, v, {"erdma0", "", "", std::nullopt, "", ""}, {}, {});
  CHECK(r["interfaces"] == json::array({{{"name", "erdma0"}}}));
  CHECK_FALSE(r.contains("ips"));
  CHECK_FALSE(r.contains("routes"));
  CHECK(r["dns"] == prev["dns"]);

  r = cni::AppendToResult(prev, v, {"erdma0", "", "", std::nullopt, "", ""}, OurIps(), {});
  REQUIRE(r["ips"].size() == 2);
  CHECK(r["ips"][0]["interface"] == 0);
}

TEST_CASE("a result in 1.1.0 converts to every version with the right fields") {
  const std::string v = GENERATE(from_range(conf::SupportedVersions()));
  INFO(v);
  json src = {
      {"cniVersion", "1.1.0"},
      {"interfaces",
       {{{"name", "erdma0"}, {"mtu", 9000}, {"socketPath", "/s"}, {"pciID", "0000:3b:00.1"}, {"x", 1}}}},
      {"ips", {{{"address", "10.9.0.5/24"}, {"interface", 0}, {"y", 2}}, {{"address", "fd00::5/64"}}}},
      {"routes",
       {{{"dst", "0.0.0.0/0"},
         {"mtu", 1500},
         {"advmss", 1460},
         {"priority", 5},
         {"table", 100},
         {"scope", 0},
         {"z", 3}}}},
      {"dns", {{"nameservers", {"1.1.1.1"}}}},
      {"unknownTop", true},
  };
  json r = conf::ConvertResult(src, v);
  CHECK(r["cniVersion"] == v);
  CHECK(r["unknownTop"] == true);
  CHECK(r["dns"] == src["dns"]);
  CHECK(r["interfaces"][0]["x"] == 1);
  CHECK(r["ips"][0]["y"] == 2);
  CHECK(r["routes"][0]["z"] == 3);
  if (Before(v, "1.0.0")) {
    CHECK(r["ips"][0]["version"] == "4");
    CHECK(r["ips"][1]["version"] == "6");
  } else {
    CHECK_FALSE(r["ips"][0].contains("version"));
  }
  if (Before(v, "1.1.0")) {
    CHECK(r["interfaces"][0] == json{{"name", "erdma0"}, {"x", 1}});
    CHECK(r["routes"][0] == json{{"dst", "0.0.0.0/0"}, {"z", 3}});
  } else {
    CHECK(r["interfaces"][0] == src["interfaces"][0]);
    CHECK(r["routes"][0] == src["routes"][0]);
  }
}

TEST_CASE("a result in 0.3.0 converts to every version and back unchanged") {
  const std::string v = GENERATE(from_range(conf::SupportedVersions()));
  INFO(v);
  json src = TerwayPrev("0.3.0");
  src["ips"].push_back({{"address", "fd00::1/64"}, {"version", "6"}, {"interface", 0}});
  json r = conf::ConvertResult(src, v);
  CHECK(r["ips"][0].contains("version") == Before(v, "1.0.0"));
  CHECK(r["ips"][1].contains("version") == Before(v, "1.0.0"));
  CHECK(r["interfaces"] == src["interfaces"]);
  CHECK(r["routes"] == src["routes"]);
  CHECK(conf::ConvertResult(r, "0.3.0") == src);
}

TEST_CASE("converting fixes an ip version that disagrees with the address") {
  json r = conf::ConvertResult({{"ips", {{{"address", "fd00::1/64"}, {"version", "4"}}}}}, "0.4.0");
  CHECK(r["ips"][0]["version"] == "6");
}

TEST_CASE("ipam ips are read from 1.x and 0.4.0 results") {
  json r1 = {{"cniVersion", "1.0.0"},
             {"ips", {{{"address", "10.9.0.5/24"}, {"gateway", "10.9.0.1"}}, {{"address", "fd00::5/64"}}}}};
  auto ips = ipam::ParseResult(r1);
  REQUIRE(ips.ok());
  REQUIRE(ips->size() == 2);
  CHECK((*ips)[0].address == Prefix("10.9.0.5/24"));
  CHECK((*ips)[0].gateway == Addr("10.9.0.1"));
  CHECK((*ips)[1].address == Prefix("fd00::5/64"));
  CHECK_FALSE((*ips)[1].gateway.has_value());

  json r04 = {
      {"cniVersion", "0.4.0"},
      {"ips", {{{"version", "4"}, {"address", "10.9.0.5/24"}, {"gateway", "10.9.0.1"}, {"interface", 0}}}}};
  ips = ipam::ParseResult(r04);
  REQUIRE(ips.ok());
  REQUIRE(ips->size() == 1);
  CHECK((*ips)[0].address.ToString() == "10.9.0.5/24");
}

TEST_CASE("ipam ips are read from 0.2.0 ip4 and ip6 objects") {
  json r = {{"cniVersion", "0.2.0"},
            {"ip4", {{"ip", "10.9.0.5/24"}, {"gateway", "10.9.0.1"}}},
            {"ip6", {{"ip", "fd00::5/64"}}}};
  auto ips = ipam::ParseResult(r);
  REQUIRE(ips.ok());
  REQUIRE(ips->size() == 2);
  CHECK((*ips)[0].address == Prefix("10.9.0.5/24"));
  CHECK((*ips)[1].address == Prefix("fd00::5/64"));
}

TEST_CASE("ipam results without ips give an empty list") {
  auto ips = ipam::ParseResult({{"cniVersion", "1.0.0"}, {"ips", json::array()}});
  REQUIRE(ips.ok());
  CHECK(ips->empty());
}

TEST_CASE("ipam garbage is refused with the IPAM code and the failing path") {
  const auto [text, fragment] = GENERATE(table<const char*, const char*>({
      {R"([])", "must be a JSON object"},
      {R"("x")", "must be a JSON object"},
      {R"({"ips": {}})", "ips: must be an array"},
      {R"({"ips": [1]})", "ips[0]: must be an object"},
      {R"({"ips": [{}]})", "ips[0].address"},
      {R"({"ips": [{"address": "10.9.0.5"}]})", "ips[0].address"},
      {R"({"ips": [{"address": "10.9.0.5/33"}]})", "ips[0].address"},
      {R"({"ips": [{"address": 5}]})", "ips[0].address"},
      {R"({"ips": [{"address": "10.9.0.5/24"}, {"address": "x/1"}]})", "ips[1].address"},
      {R"({"ips": [{"address": "10.9.0.5/24", "gateway": "fd00::1"}]})", "ips[0].gateway"},
      {R"({"ips": [{"address": "10.9.0.5/24", "gateway": "nope"}]})", "ips[0].gateway"},
      {R"({"ips": [{"address": "10.9.0.5/24", "gateway": 1}]})", "ips[0].gateway"},
      {R"({"ip4": {"ip": "fd00::5/64"}})", "ip4.ip"},
      {R"({"ip4": "10.9.0.5/24"})", "ip4: must be an object"},
      {R"({"code": 11, "msg": "no addresses left"})", "no addresses left"},
  }));
  INFO(text);
  auto r = ipam::ParseResult(json::parse(text));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kIpam);
  CHECK_THAT(r.error().msg, Catch::Contains(fragment));
}

TEST_CASE("error json carries version code message and details only when set") {
  json j = cni::ErrorJson("1.0.0", base::Error(Code::kInvalidConfig, "mtu: bad"));
  CHECK(j == json{{"cniVersion", "1.0.0"}, {"code", 7}, {"msg", "mtu: bad"}});

  j = cni::ErrorJson("0.4.0", base::Error(Code::kKernel, "m", "extack: busy"));
  CHECK(j == json{{"cniVersion", "0.4.0"}, {"code", 101}, {"msg", "m"}, {"details", "extack: busy"}});
}

TEST_CASE("error json can always be dumped even when the message holds invalid UTF-8") {
  json j = cni::ErrorJson("1.0.0", base::Error(Code::kKernel, "dev \xff\xfe", "\xc3"));
  std::string text;
  REQUIRE_NOTHROW(text = j.dump());
  CHECK_THAT(text, Catch::StartsWith(R"({"cniVersion":"1.0.0","code":101,"details":)"));
}

}  // namespace

}  // namespace test_unit_result_test

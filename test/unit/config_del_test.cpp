// conf::Parse for DEL and GC: only the keys DEL uses must be valid; any other
// group that does not parse keeps its defaults and is a warning.
#include <catch2/catch.hpp>
#include <string>

#include "conf/config.h"

namespace {

using base::Code;
using nlohmann::json;

base::Result<conf::Config> ParseForDel(const char* patch) {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}, "dataDir": "/run/erdma-cni"})");
  j.merge_patch(json::parse(patch));
  return conf::Parse(j.dump(), /*for_del=*/true);
}

bool Warned(const conf::Config& c, const std::string& prefix) {
  for (const std::string& w : c.del_warnings)
    if (w.starts_with(prefix)) return true;
  return false;
}

TEST_CASE("DEL with an mtu edited into a string succeeds, keeps the default and records a warning") {
  auto r = ParseForDel(R"({"mtu": "9000"})");
  INFO((r.ok() ? std::string() : r.error().msg));
  REQUIRE(r.ok());
  CHECK_FALSE(r->mtu.has_value());
  REQUIRE(r->del_warnings.size() == 1);
  CHECK_THAT(r->del_warnings[0], Catch::StartsWith("mtu: must be an integer 68..65535"));
}

TEST_CASE(
    "DEL with a broken device, routing, ifName, mode block, rdma or smcr succeeds with a warning each") {
  auto r = ParseForDel(R"({"device": {"name": "eth1", "mac": "02:00:00:00:00:01"}, "ifName": "a/b",
                          "routing": {"rulePriority": 99999, "x": 1}, "rdma": {"netnsMode": "own"},
                          "smcr": {"enable": "sometimes"}, "macvlan": {"mode": "bridge"},
                          "addresses": "all"})");
  INFO((r.ok() ? std::string() : r.error().msg));
  REQUIRE(r.ok());
  CHECK(Warned(*r, "device: set exactly one of"));
  CHECK(r->device.value.empty());
  CHECK(Warned(*r, "ifName: "));
  CHECK(r->if_name == "erdma0");
  CHECK(Warned(*r, "routing."));
  CHECK(r->routing.rule_priority == 200u);
  CHECK(Warned(*r, "rdma.netnsMode: "));
  CHECK(Warned(*r, "smcr.enable: "));
  CHECK(Warned(*r, "macvlan: only mode"));
  CHECK(Warned(*r, "addresses: "));
  CHECK(r->del_warnings.size() == 7);
}

TEST_CASE("DEL with unknown keys succeeds and names each in a warning") {
  auto r = ParseForDel(R"({"mdoe": "ipvlan", "routing": {"rulePriorty": 300}})");
  REQUIRE(r.ok());
  CHECK(Warned(*r, "mdoe: not a key of erdma-cni; did you mean mode?"));
  CHECK(Warned(*r,
               "routing.rulePriorty: not a key of erdma-cni's routing; did you mean routing.rulePriority?"));
  CHECK(r->del_warnings.size() == 2);
}

TEST_CASE("DEL keeps an ipam that parses, and skips a broken one with a warning") {
  auto r = ParseForDel(R"({"ipam": {"type": "host-local", "subnet": "10.9.0.0/24"}, "mtu": 1})");
  REQUIRE(r.ok());
  CHECK(r->ipam_type == "host-local");
  CHECK(r->addresses == conf::AddressMode::kIpam);

  r = ParseForDel(R"({"ipam": {"type": "../host-local"}})");
  REQUIRE(r.ok());
  CHECK(r->ipam.is_null());
  CHECK(r->ipam_type.empty());
  CHECK(r->addresses == conf::AddressMode::kInherit);
  CHECK(Warned(*r, "ipam.type: "));
}

TEST_CASE("DEL of a clean config records no warning") {
  auto r = ParseForDel(R"({"routing": {"rulePriority": 300}})");
  REQUIRE(r.ok());
  CHECK(r->del_warnings.empty());
  CHECK(r->routing.rule_priority == 300u);
}

TEST_CASE(
    "DEL still fails on the keys it uses: name, dataDir, logFile, lockTimeoutMs, the runtime's objects") {
  for (const char* patch :
       {R"({"name": "a/b"})", R"({"name": null})", R"({"dataDir": "run/erdma-cni"})", R"({"dataDir": 5})",
        R"({"logFile": "log"})", R"({"logLevel": "loud"})", R"({"logMaxBytes": -1})",
        R"({"lockTimeoutMs": "10"})", R"({"ipamTimeoutMs": 0})", R"({"type": 5})", R"({"prevResult": []})",
        R"({"runtimeConfig": "x"})", R"({"args": 1})"}) {
    INFO(patch);
    auto r = ParseForDel(patch);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidConfig);
  }
  auto v = ParseForDel(R"({"cniVersion": "9.9.9"})");
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().code == Code::kIncompatibleVersion);
  CHECK_FALSE(conf::Parse("[]", true).ok());
}

TEST_CASE("ADD and CHECK refuse what DEL only warns about") {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}, "mtu": "9000"})");
  auto r = conf::Parse(j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("mtu: "));
}

}  // namespace

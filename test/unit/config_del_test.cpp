// conf::Parse for DEL and GC: only the keys DEL uses must be valid; any other
// group that does not parse keeps its defaults and is a warning.
#include <catch2/catch.hpp>
#include <string>

#include "cni/driver/registry.h"
#include "conf/config.h"

namespace test_unit_config_del_test {

namespace {

using base::Code;
using nlohmann::json;

base::Result<conf::Config> ParseForDel(const char* patch) {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}, "dataDir": "/run/erdma-cni"})");
  j.merge_patch(json::parse(patch));
  return conf::Parse(cni::Modes(), j.dump(), /*for_del=*/true);
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

TEST_CASE("DEL still fails on the keys that find its journal: name, dataDir, type, the runtime's objects") {
  for (const char* patch :
       {R"({"name": "a/b"})", R"({"name": null})", R"({"dataDir": "run/erdma-cni"})", R"({"dataDir": 5})",
        R"({"type": 5})", R"({"prevResult": []})", R"({"runtimeConfig": "x"})", R"({"args": 1})"}) {
    INFO(patch);
    auto r = ParseForDel(patch);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidConfig);
  }
  auto v = ParseForDel(R"({"cniVersion": "9.9.9"})");
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().code == Code::kIncompatibleVersion);
  CHECK_FALSE(conf::Parse(cni::Modes(), "[]", true).ok());
}

// DEL's two reads: ParseDelKeys, the journal's keys alone (a DEL with nothing of its own stops there), then
// ParseDelRest, which must end where Parse for DEL ends.
base::Result<conf::Config> ParseDelKeysOf(const char* patch) {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}, "dataDir": "/run/erdma-cni"})");
  j.merge_patch(json::parse(patch));
  return conf::ParseDelKeys(cni::Modes(), j.dump());
}

TEST_CASE(
    "ParseDelKeys reads the journal's keys and nothing else, and ParseDelRest ends where Parse for DEL "
    "does") {
  for (const char* patch :
       {R"({})", R"({"mtu": "9000"})", R"({"mdoe": "ipvlan", "routing": {"rulePriorty": 300}})",
        R"({"device": {"name": "eth1", "mac": "02:00:00:00:00:01"}, "ifName": "a/b", "addresses": "all"})",
        R"({"ipam": {"type": "host-local", "subnet": "10.9.0.0/24"}, "mtu": 1500, "mode": "macvlan",
            "routing": {"rulePriority": 300}, "logFile": "/var/log/erdma.log", "lockTimeoutMs": 5,
            "prevResult": {"cniVersion": "1.0.0", "ips": []}})"}) {
    INFO(patch);
    auto whole = ParseForDel(patch);
    REQUIRE(whole.ok());
    auto keys = ParseDelKeysOf(patch);
    REQUIRE(keys.ok());
    // The journal's keys are read...
    CHECK(keys->name == whole->name);
    CHECK(keys->data_dir == whole->data_dir);
    CHECK(keys->log_file == whole->log_file);
    CHECK(keys->lock_timeout_ms == whole->lock_timeout_ms);
    CHECK(keys->prev_result == whole->prev_result);
    // ...and nothing else: no device, no warning, the defaults.
    CHECK(keys->device.value.empty());
    CHECK(keys->del_warnings.empty());
    CHECK_FALSE(keys->mtu.has_value());
    CHECK(keys->mode == conf::Config().mode);

    auto rest = conf::ParseDelRest(*keys);
    REQUIRE(rest.ok());
    CHECK(rest->del_warnings == whole->del_warnings);
    CHECK(rest->name == whole->name);
    CHECK(rest->data_dir == whole->data_dir);
    CHECK(rest->device.value == whole->device.value);
    CHECK(rest->mtu == whole->mtu);
    CHECK(rest->mode == whole->mode);
    CHECK(rest->if_name == whole->if_name);
    CHECK(rest->addresses == whole->addresses);
    CHECK(rest->ipam == whole->ipam);
    CHECK(rest->ipam_type == whole->ipam_type);
    CHECK(rest->routing.rule_priority == whole->routing.rule_priority);
    CHECK(rest->raw == whole->raw);
    // The keys' own value is left as it was read.
    CHECK(keys->device.value.empty());
    CHECK_FALSE(keys->raw.is_null());
  }
}

TEST_CASE(
    "DEL warns about a logging or timeout key that does not parse and takes its default, in both of its "
    "reads") {
  for (const char* patch :
       {R"({"logFile": "log"})", R"({"logLevel": "loud"})", R"({"logLevel": 3})", R"({"logMaxBytes": -1})",
        R"({"lockTimeoutMs": "10"})", R"({"ipamTimeoutMs": 0})"}) {
    INFO(patch);
    const std::string key = json::parse(patch).begin().key();
    for (auto r : {ParseForDel(patch), ParseDelKeysOf(patch)}) {
      REQUIRE(r.ok());
      CHECK(Warned(*r, key + ": "));
      const conf::Config defaults;
      CHECK(r->log_file == defaults.log_file);
      CHECK(r->log_level == defaults.log_level);
      CHECK(r->log_max_bytes == defaults.log_max_bytes);
      CHECK(r->lock_timeout_ms == defaults.lock_timeout_ms);
      CHECK(r->ipam_timeout_ms == defaults.ipam_timeout_ms);
    }
    // ADD refuses it.
    json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                             "device": {"name": "eth1"}})");
    j.merge_patch(json::parse(patch));
    auto add = conf::Parse(cni::Modes(), j.dump());
    REQUIRE_FALSE(add.ok());
    CHECK(add.error().code == Code::kInvalidConfig);
    CHECK_THAT(add.error().msg, Catch::StartsWith(key + ": "));
  }
}

TEST_CASE("ParseDelKeys fails on every key that finds DEL's journal, as Parse for DEL does") {
  for (const char* patch : {R"({"name": "a/b"})", R"({"dataDir": "run/erdma-cni"})", R"({"type": 5})",
                            R"({"prevResult": []})", R"({"runtimeConfig": "x"})", R"({"args": 1})"}) {
    INFO(patch);
    auto r = ParseDelKeysOf(patch);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidConfig);
    CHECK(r.error().msg == ParseForDel(patch).error().msg);
  }
  auto v = ParseDelKeysOf(R"({"cniVersion": "9.9.9"})");
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().code == Code::kIncompatibleVersion);
  CHECK(conf::ParseDelKeys(cni::Modes(), "[]").error().code == Code::kDecoding);
  CHECK(conf::ParseDelKeys(cni::Modes(), "{\"name\": ").error().code == Code::kDecoding);
}

TEST_CASE("ADD and CHECK refuse what DEL only warns about") {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}, "mtu": "9000"})");
  auto r = conf::Parse(cni::Modes(), j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("mtu: "));
}

}  // namespace

}  // namespace test_unit_config_del_test

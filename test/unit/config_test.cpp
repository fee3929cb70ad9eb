#include "conf/config.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cni/driver/move.h"
#include "cni/driver/registry.h"
#include "conf/version.h"

namespace test_unit_config_test {

namespace {

using base::Code;
using conf::AddressMode;
using conf::Config;
using conf::DeviceSelector;
using nlohmann::json;
using namespace std::string_literals;

json Base() {
  return json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                         "device": {"name": "eth1"}})");
}

// RFC 7396 merge: a null in the patch removes the key from Base().
base::Result<Config> ParsePatched(const char* patch, bool for_del = false) {
  json j = Base();
  j.merge_patch(json::parse(patch));
  return conf::Parse(cni::Modes(), j.dump(), for_del);
}

struct Bad {
  const char* patch;
  Code code;
  const char* prefix;  // the error message must start with this
};

const std::vector<Bad> kBadValues = {
    // cniVersion
    {R"({"cniVersion": null})", Code::kIncompatibleVersion,
     "cniVersion: missing; set it to one of 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"},
    {R"({"cniVersion": "0.2.0"})", Code::kIncompatibleVersion,
     R"(cniVersion: "0.2.0" is not supported; use one of 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0)"},
    {R"({"cniVersion": "2.0.0"})", Code::kIncompatibleVersion, R"(cniVersion: "2.0.0" is not)"},
    {R"({"cniVersion": ""})", Code::kIncompatibleVersion, R"(cniVersion: "" is not supported)"},
    {R"({"cniVersion": "1.0"})", Code::kIncompatibleVersion, R"(cniVersion: "1.0" is not)"},
    {R"({"cniVersion": 1.0})", Code::kIncompatibleVersion, "cniVersion: must be a string"},
    {R"({"cniVersion": null, "cniVersions": "1.0.0"})", Code::kInvalidConfig,
     "cniVersions: must be an array of version strings"},
    {R"({"cniVersion": null, "cniVersions": ["1.0.0", 1]})", Code::kInvalidConfig,
     "cniVersions: must be an array"},
    {R"({"cniVersion": null, "cniVersions": ["0.2.0", "2.0.0"]})", Code::kIncompatibleVersion,
     "cniVersions: "},
    {R"({"cniVersion": null, "cniVersions": []})", Code::kIncompatibleVersion, "cniVersions: "},
    // name
    {R"({"name": null})", Code::kInvalidConfig, "name: missing"},
    {R"({"name": ""})", Code::kInvalidConfig, "name: must be a non-empty string"},
    {R"({"name": 5})", Code::kInvalidConfig, "name: must be a non-empty string"},
    {R"({"name": "a/b"})", Code::kInvalidConfig, R"(name: "a/b" must be usable as a directory)"},
    {R"({"name": "."})", Code::kInvalidConfig, R"(name: "." must be usable)"},
    {R"({"name": ".."})", Code::kInvalidConfig, R"(name: ".." must be usable)"},
    {R"({"name": "a\u0000b"})", Code::kInvalidConfig, "name: "},
    {R"({"name": "a\nb"})", Code::kInvalidConfig, "name: "},
    {R"({"name": "devices"})", Code::kInvalidConfig, R"(name: "devices" is reserved)"},
    {R"({"name": "children"})", Code::kInvalidConfig, R"(name: "children" is reserved)"},
    // type, mode
    {R"({"type": 5})", Code::kInvalidConfig, "type: must be a string"},
    {R"({"mode": "foo"})", Code::kInvalidConfig, R"(mode: "foo" is not supported; use "move")"},
    {R"({"mode": "Move"})", Code::kInvalidConfig, R"(mode: "Move" is not supported)"},
    {R"({"mode": 1})", Code::kInvalidConfig, R"(mode: must be a string; use "move")"},
    // device
    {R"({"device": "eth1"})", Code::kInvalidConfig, "device: must be an object"},
    {R"({"device": {"name": null}})", Code::kInvalidConfig, "device: set exactly one of name, mac, pci"},
    {R"({"device": {"mac": "02:00:00:00:00:01"}})", Code::kInvalidConfig,
     "device: set exactly one of name, mac, pci"},
    {R"({"device": {"name": null, "mac": "02:00:00:00:00:01", "pci": "0000:3b:00.1"}})", Code::kInvalidConfig,
     "device: set exactly one of name, mac, pci"},
    {R"({"device": {"name": ""}})", Code::kInvalidConfig, "device.name: must be an interface name"},
    {R"({"device": {"name": "abcdefghijklmnop"}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": "eth/1"}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": "eth:1"}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": "eth 1"}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": "eth\t1"}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": "."}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": ".."}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": null, "resource": "erdma"}})", Code::kInvalidConfig,
     "device.resource: must be the Kubernetes"},
    {R"({"device": {"name": null, "resource": "/erdma"}})", Code::kInvalidConfig, "device.resource: "},
    {R"({"device": {"name": null, "resource": "aliyun/ erdma"}})", Code::kInvalidConfig, "device.resource: "},
    {R"({"device": {"name": null, "resource": 1}})", Code::kInvalidConfig, "device.resource: "},
    {R"({"device": {"resource": "aliyun/erdma"}})", Code::kInvalidConfig,
     "device: set exactly one of name, mac, pci, rdma, resource"},
    {R"({"device": {"name": 7}})", Code::kInvalidConfig, "device.name: "},
    {R"({"device": {"name": null, "mac": "02:00:00:00:00"}})", Code::kInvalidConfig,
     "device.mac: must be a MAC address"},
    {R"({"device": {"name": null, "mac": "02-00-00-00-00-01"}})", Code::kInvalidConfig, "device.mac: "},
    {R"({"device": {"name": null, "mac": "02:00:00:00:00:0g"}})", Code::kInvalidConfig, "device.mac: "},
    {R"({"device": {"name": null, "mac": "02:00:00:00:00:01:02"}})", Code::kInvalidConfig, "device.mac: "},
    {R"({"device": {"name": null, "mac": 2}})", Code::kInvalidConfig, "device.mac: "},
    {R"({"device": {"name": null, "pci": "3b:00"}})", Code::kInvalidConfig,
     "device.pci: must be a PCI address"},
    {R"({"device": {"name": null, "pci": "0000:3b:00.8"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": "0000:3b:20.0"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": "000:3b:00.1"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": "0000:3bb:00.1"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": "0000:xx:00.1"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": "0000:0000:3b:00.1"}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": {"name": null, "pci": ""}})", Code::kInvalidConfig, "device.pci: "},
    {R"({"device": null})", Code::kInvalidConfig,
     "device: missing; set device.name, device.mac or device.pci, or let the runtime pass "
     "deviceID"},
    {R"({"device": null, "deviceID": ""})", Code::kInvalidConfig, "deviceID: must be a non-empty"},
    {R"({"device": null, "deviceID": "a b"})", Code::kInvalidConfig, "deviceID: "},
    {R"({"device": null, "deviceID": 3})", Code::kInvalidConfig, "deviceID: "},
    {R"({"device": null, "runtimeConfig": {"deviceID": "a\u0001"}})", Code::kInvalidConfig,
     "runtimeConfig.deviceID: "},
    // ifName, mtu
    {R"({"ifName": ""})", Code::kInvalidConfig, "ifName: must be an interface name"},
    {R"({"ifName": "0123456789abcdef"})", Code::kInvalidConfig, "ifName: "},
    {R"({"ifName": "a/b"})", Code::kInvalidConfig, "ifName: "},
    {R"({"ifName": 0})", Code::kInvalidConfig, "ifName: "},
    {R"({"mtu": 67})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": 65536})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": -1500})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": 1500.0})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": 1500.5})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": "1500"})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": true})", Code::kInvalidConfig, "mtu: must be an integer 68..65535"},
    {R"({"mtu": 18446744073709551616})", Code::kInvalidConfig, "mtu: must be an integer"},
    // mode none: only chained
    {R"({"mode": "none", "device": null})", Code::kInvalidConfig,
     R"(mode: "none" adds SMC-R to the interface of the plugin before erdma-cni in a chain (its prevResult), and there is none)"},
    // addresses, ipam
    {R"({"addresses": "dhcp"})", Code::kInvalidConfig,
     R"(addresses: "dhcp" is not supported; use "inherit", "ipam" or "none")"},
    {R"({"ipam": {"type": "host-local"}, "addresses": "inherit"})", Code::kInvalidConfig,
     R"(ipam: set beside addresses "inherit", which never runs the IPAM plugin; remove ipam, or set addresses to "ipam" (the default with an ipam object))"},
    {R"({"ipam": {"type": "host-local"}, "addresses": "none"})", Code::kInvalidConfig,
     R"(ipam: set beside addresses "none", which never runs the IPAM plugin; remove ipam, or set addresses to "ipam" (the default with an ipam object))"},
    {R"({"addresses": true})", Code::kInvalidConfig, "addresses: must be a string"},
    {R"({"addresses": "ipam"})", Code::kInvalidConfig, R"(addresses: "ipam" needs an ipam object)"},
    {R"({"ipam": "host-local"})", Code::kInvalidConfig, "ipam: must be an object"},
    {R"({"ipam": {}})", Code::kInvalidConfig, "ipam.type: must be a non-empty string"},
    {R"({"ipam": {"type": ""}})", Code::kInvalidConfig, "ipam.type: must be a non-empty string"},
    {R"({"ipam": {"type": 1}})", Code::kInvalidConfig, "ipam.type: must be a non-empty string"},
    {R"({"ipam": {"type": "../bin/sh"}})", Code::kInvalidConfig,
     R"(ipam.type: "../bin/sh" must be a plugin file name)"},
    {R"({"ipam": {"type": ".."}})", Code::kInvalidConfig, R"(ipam.type: ".." must be)"},
    // routing
    {R"({"routing": []})", Code::kInvalidConfig, "routing: must be an object"},
    {R"({"routing": {"table": "main"}})", Code::kInvalidConfig,
     R"(routing.table: must be "auto" or an integer 1..4294967295 other than 253, 254 and 255)"},
    {R"({"routing": {"table": 0}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": 253}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": 254}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": 255}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": 4294967296}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": -5}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"table": 100.0}})", Code::kInvalidConfig, "routing.table: "},
    {R"({"routing": {"rulePriority": 32768}})", Code::kInvalidConfig,
     "routing.rulePriority: must be an integer 0..32767"},
    {R"({"routing": {"rulePriority": -1}})", Code::kInvalidConfig, "routing.rulePriority: "},
    {R"({"routing": {"rulePriority": 200.0}})", Code::kInvalidConfig, "routing.rulePriority: "},
    {R"({"routing": {"rulePriority": "200"}})", Code::kInvalidConfig, "routing.rulePriority: "},
    {R"({"routing": {"rulePriority": false}})", Code::kInvalidConfig, "routing.rulePriority: "},
    {R"({"routing": {"routeMetric": 4294967296}})", Code::kInvalidConfig,
     "routing.routeMetric: must be an integer 0..4294967295"},
    {R"({"routing": {"routeMetric": -1}})", Code::kInvalidConfig, "routing.routeMetric: "},
    {R"({"routing": {"defaultRoute": "yes"}})", Code::kInvalidConfig,
     "routing.defaultRoute: must be true or false"},
    {R"({"routing": {"defaultRoute": 1}})", Code::kInvalidConfig, "routing.defaultRoute: "},
    // files and logging
    {R"({"dataDir": "var/lib/x"})", Code::kInvalidConfig,
     R"(dataDir: must be an absolute path without ".." components)"},
    {R"({"dataDir": "/var/lib/../x"})", Code::kInvalidConfig, "dataDir: "},
    {R"({"dataDir": "/var/lib/.."})", Code::kInvalidConfig, "dataDir: "},
    {R"({"dataDir": ""})", Code::kInvalidConfig, "dataDir: "},
    {R"({"dataDir": "/var/\u0000x"})", Code::kInvalidConfig, "dataDir: "},
    {R"({"dataDir": 1})", Code::kInvalidConfig, "dataDir: "},
    {R"({"logFile": "erdma.log"})", Code::kInvalidConfig, "logFile: must be an absolute path or empty"},
    {R"({"logFile": false})", Code::kInvalidConfig, "logFile: "},
    {R"({"logLevel": "trace"})", Code::kInvalidConfig, R"(logLevel: "trace" is not supported)"},
    {R"({"logLevel": 3})", Code::kInvalidConfig, "logLevel: must be a string"},
    {R"({"lockTimeoutMs": -1})", Code::kInvalidConfig, "lockTimeoutMs: must be an integer 0..120000"},
    {R"({"lockTimeoutMs": 120001})", Code::kInvalidConfig, "lockTimeoutMs: must be an integer 0..120000"},
    {R"({"lockTimeoutMs": 1.5})", Code::kInvalidConfig, "lockTimeoutMs: "},
    {R"({"lockTimeoutMs": "500"})", Code::kInvalidConfig, "lockTimeoutMs: "},
    // runtime objects
    {R"({"prevResult": []})", Code::kInvalidConfig, "prevResult: must be an object"},
    {R"({"prevResult": "x"})", Code::kInvalidConfig, "prevResult: must be an object"},
    {R"({"runtimeConfig": 1})", Code::kInvalidConfig, "runtimeConfig: must be an object"},
    {R"({"args": "K=V"})", Code::kInvalidConfig, "args: must be an object"},
};

TEST_CASE("parse rejects every bad value with its code and a message naming the key path") {
  const Bad c = GENERATE(from_range(kBadValues));
  INFO("patch: " << c.patch);
  auto r = ParsePatched(c.patch);
  REQUIRE_FALSE(r.ok());
  INFO("message: " << r.error().msg);
  CHECK(r.error().code == c.code);
  CHECK_THAT(r.error().msg, Catch::StartsWith(c.prefix));
}

struct Good {
  const char* patch;
  std::function<void(const Config&)> check;
};

const std::vector<Good> kGoodValues = {
    {R"({"cniVersion": "0.3.0"})", [](const Config& c) { CHECK(c.cni_version == "0.3.0"); }},
    {R"({"cniVersion": "1.1.0"})", [](const Config& c) { CHECK(c.cni_version == "1.1.0"); }},
    {R"({"name": "net_1.a-b"})", [](const Config& c) { CHECK(c.name == "net_1.a-b"); }},
    {R"({"type": "erdma"})", [](const Config& c) { CHECK(c.type == "erdma"); }},
    {R"({"mode": "move"})", [](const Config& c) { CHECK(c.mode == &cni::kMoveMode); }},
    {R"({"device": {"name": "eth1"}})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kName);
       CHECK(c.device.value == "eth1");
     }},
    {R"({"device": {"name": "abcdefghijklmno"}})",
     [](const Config& c) { CHECK(c.device.value == "abcdefghijklmno"); }},
    {R"({"device": {"name": null, "mac": "02:AB:cd:EF:00:01"}})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kMac);
       CHECK(c.device.value == "02:ab:cd:ef:00:01");
     }},
    {R"({"device": {"name": null, "pci": "0000:3B:00.1"}})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kPci);
       CHECK(c.device.value == "0000:3b:00.1");
     }},
    {R"({"device": {"name": null, "pci": "3b:1f.7"}})",
     [](const Config& c) { CHECK(c.device.value == "0000:3b:1f.7"); }},
    {R"({"device": {"name": null, "pci": "10000:01:00.0"}})",
     [](const Config& c) { CHECK(c.device.value == "10000:01:00.0"); }},
    {R"({"device": {"name": "eth2"}, "deviceID": "0000:3b:00.1"})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kName);
       CHECK(c.device.value == "eth2");
     }},
    {R"({"device": null, "deviceID": "0000:3b:00.1"})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kDeviceId);
       CHECK(c.device.value == "0000:3b:00.1");
     }},
    {R"({"device": null, "runtimeConfig": {"deviceID": "erdma_0"}})",
     [](const Config& c) {
       CHECK(c.device.by == DeviceSelector::By::kDeviceId);
       CHECK(c.device.value == "erdma_0");
       CHECK(c.runtime_config == json{{"deviceID", "erdma_0"}});
     }},
    {R"({"device": null, "deviceID": "top", "runtimeConfig": {"deviceID": "inner"}})",
     [](const Config& c) { CHECK(c.device.value == "top"); }},
    {R"({"ifName": "net1"})", [](const Config& c) { CHECK(c.if_name == "net1"); }},
    {R"({"mtu": 68})", [](const Config& c) { CHECK(c.mtu == 68u); }},
    {R"({"mtu": 65535})", [](const Config& c) { CHECK(c.mtu == 65535u); }},
    {R"({"mtu": null})", [](const Config& c) { CHECK_FALSE(c.mtu.has_value()); }},
    {R"({"ipam": {"type": "host-local", "subnet": "10.9.0.0/24"}})",
     [](const Config& c) {
       CHECK(c.addresses == AddressMode::kIpam);
       CHECK(c.ipam_type == "host-local");
       CHECK(c.ipam["subnet"] == "10.9.0.0/24");
     }},
    {R"({"addresses": "none"})", [](const Config& c) { CHECK(c.addresses == AddressMode::kNone); }},
    {R"({"addresses": "inherit"})", [](const Config& c) { CHECK(c.addresses == AddressMode::kInherit); }},
    {R"({"routing": {"table": "auto"}})", [](const Config& c) { CHECK_FALSE(c.routing.table.has_value()); }},
    {R"({"routing": {"table": 1}})", [](const Config& c) { CHECK(c.routing.table == 1u); }},
    {R"({"routing": {"table": 252}})", [](const Config& c) { CHECK(c.routing.table == 252u); }},
    {R"({"routing": {"table": 256}})", [](const Config& c) { CHECK(c.routing.table == 256u); }},
    {R"({"routing": {"table": 4294967295}})", [](const Config& c) { CHECK(c.routing.table == 4294967295u); }},
    {R"({"routing": {"rulePriority": 0, "routeMetric": 4294967295, "defaultRoute": false}})",
     [](const Config& c) {
       CHECK(c.routing.rule_priority == 0u);
       CHECK(c.routing.route_metric == 4294967295u);
       CHECK_FALSE(c.routing.default_route);
     }},
    {R"({"routing": {"rulePriority": 32767}})",
     [](const Config& c) { CHECK(c.routing.rule_priority == 32767u); }},
    {R"({"dataDir": "/run/erdma"})", [](const Config& c) { CHECK(c.data_dir == "/run/erdma"); }},
    {R"({"dataDir": "/run/..erdma/x.."})", [](const Config& c) { CHECK(c.data_dir == "/run/..erdma/x.."); }},
    {R"({"logFile": ""})", [](const Config& c) { CHECK(c.log_file.empty()); }},
    {R"({"logFile": "/var/log/erdma.log"})",
     [](const Config& c) { CHECK(c.log_file == "/var/log/erdma.log"); }},
    {R"({"logLevel": "debug"})", [](const Config& c) { CHECK(c.log_level == base::LogLevel::kDebug); }},
    {R"({"logLevel": "error"})", [](const Config& c) { CHECK(c.log_level == base::LogLevel::kError); }},
    {R"({"lockTimeoutMs": 0})", [](const Config& c) { CHECK(c.lock_timeout_ms == 0u); }},
    {R"({"lockTimeoutMs": 250})", [](const Config& c) { CHECK(c.lock_timeout_ms == 250u); }},
    {R"({"lockTimeoutMs": 120000})", [](const Config& c) { CHECK(c.lock_timeout_ms == 120000u); }},
    {R"({"prevResult": {"cniVersion": "1.0.0", "interfaces": [{"name": "eth0"}]}})",
     [](const Config& c) {
       CHECK(c.chained());
       CHECK(c.prev_result["interfaces"][0]["name"] == "eth0");
       // Taken out of the raw tree, not copied: the IPAM plugin's config, built from it, never holds it.
       CHECK_FALSE(c.raw.contains("prevResult"));
     }},
    {R"({"args": {"cni": {"ips": ["10.9.0.5"]}}})",
     [](const Config& c) { CHECK(c.args["cni"]["ips"][0] == "10.9.0.5"); }},
    {R"({"capabilities": {"ips": true, "someFutureKey": {"x": [1, 2]}}})",
     [](const Config& c) { CHECK(c.raw["capabilities"]["someFutureKey"]["x"][1] == 2); }},
};

TEST_CASE("parse accepts every good value and stores it") {
  const Good c = GENERATE(from_range(kGoodValues));
  INFO("patch: " << c.patch);
  auto r = ParsePatched(c.patch);
  INFO("error: " << (r.ok() ? std::string() : r.error().msg));
  REQUIRE(r.ok());
  c.check(*r);
}

TEST_CASE("parse fills the documented defaults for a minimal config with a device") {
  auto r =
      conf::Parse(cni::Modes(), R"({"cniVersion": "1.0.0", "name": "erdma", "device": {"name": "eth1"}})");
  REQUIRE(r.ok());
  const Config& c = *r;
  CHECK(c.cni_version == "1.0.0");
  CHECK(c.name == "erdma");
  CHECK(c.type.empty());
  CHECK(c.mode == &cni::kMoveMode);
  CHECK(c.if_name == "erdma0");
  CHECK_FALSE(c.mtu.has_value());
  CHECK(c.addresses == AddressMode::kInherit);
  CHECK(c.ipam.is_null());
  CHECK(c.ipam_type.empty());
  CHECK_FALSE(c.routing.table.has_value());
  CHECK(c.routing.rule_priority == 200u);
  CHECK(c.routing.route_metric == 200u);
  CHECK(c.routing.default_route);
  CHECK(c.data_dir == "/run/erdma-cni");
  CHECK(c.log_file.empty());
  CHECK(c.log_level == base::LogLevel::kInfo);
  CHECK(c.lock_timeout_ms == 10000u);
  CHECK_FALSE(c.chained());
  CHECK(c.runtime_config == json::object());
  CHECK(c.args == json::object());
  CHECK(c.raw == json::parse(R"({"cniVersion": "1.0.0", "name": "erdma",
                                 "device": {"name": "eth1"}})"));
}

TEST_CASE("parse for DEL accepts a minimal config without any device") {
  auto r = conf::Parse(cni::Modes(), R"({"cniVersion": "0.4.0", "name": "erdma", "type": "erdma-cni"})",
                       /*for_del=*/true);
  REQUIRE(r.ok());
  CHECK(r->cni_version == "0.4.0");
  CHECK(r->type == "erdma-cni");
  CHECK(r->device.value.empty());
}

TEST_CASE("parse for ADD refuses the same minimal config because no device is chosen") {
  auto r = conf::Parse(cni::Modes(), R"({"cniVersion": "0.4.0", "name": "erdma", "type": "erdma-cni"})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK_THAT(r.error().msg, Catch::StartsWith("device: missing"));
}

TEST_CASE("parse for DEL still validates the keys DEL uses") {
  auto r = conf::Parse(cni::Modes(), R"({"cniVersion": "1.0.0", "name": "erdma", "dataDir": "run"})", true);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
}

TEST_CASE("parse picks the highest supported version from cniVersions") {
  auto r = conf::Parse(cni::Modes(), R"({"cniVersions": ["0.4.0", "1.1.0", "9.9.9", "1.0.0"], "name": "n",
                           "device": {"name": "eth1"}})");
  REQUIRE(r.ok());
  CHECK(r->cni_version == "1.1.0");

  r = conf::Parse(cni::Modes(),
                  R"({"cniVersions": ["0.2.0", "0.3.1"], "name": "n", "device": {"name": "e"}})");
  REQUIRE(r.ok());
  CHECK(r->cni_version == "0.3.1");
}

TEST_CASE("parse prefers cniVersion over cniVersions") {
  auto r = conf::Parse(cni::Modes(), R"({"cniVersion": "0.4.0", "cniVersions": ["1.1.0"], "name": "n",
                           "device": {"name": "eth1"}})");
  REQUIRE(r.ok());
  CHECK(r->cni_version == "0.4.0");
}

TEST_CASE("parse accepts every supported version") {
  for (const auto& v : conf::SupportedVersions()) {
    INFO(v);
    json j = Base();
    j["cniVersion"] = v;
    auto r = conf::Parse(cni::Modes(), j.dump());
    REQUIRE(r.ok());
    CHECK(r->cni_version == v);
  }
}

TEST_CASE("parse accepts a network name of 128 bytes and refuses 129") {
  json j = Base();
  j["name"] = std::string(128, 'n');
  CHECK(conf::Parse(cni::Modes(), j.dump()).ok());
  j["name"] = std::string(129, 'n');
  auto r = conf::Parse(cni::Modes(), j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
}

TEST_CASE("parse accepts a device ID of 256 bytes and refuses 257") {
  json j = Base();
  j.erase("device");
  j["deviceID"] = std::string(256, 'd');
  CHECK(conf::Parse(cni::Modes(), j.dump()).ok());
  j["deviceID"] = std::string(257, 'd');
  CHECK_FALSE(conf::Parse(cni::Modes(), j.dump()).ok());
}

TEST_CASE("parse keeps the raw object including what ipam and the runtime's objects hold") {
  const char* text = R"({"cniVersion": "1.0.0", "name": "erdma", "device": {"name": "eth1"},
                         "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.9.0.0/24"}]]},
                         "capabilities": {"vendorThing": [1, "two", null]}})";
  auto r = conf::Parse(cni::Modes(), text);
  REQUIRE(r.ok());
  CHECK(r->raw == json::parse(text));
}

struct Undecodable {
  const char* what;
  std::string bytes;
};

TEST_CASE("parse reports undecodable stdin as a decoding error without throwing") {
  const Undecodable c = GENERATE(values<Undecodable>({
      {"empty", ""},
      {"an array", "[]"},
      {"a number", "42"},
      {"a string", "\"x\""},
      {"null", "null"},
      {"truncated object", "{"},
      {"trailing garbage", R"({"name": "x"} x)"},
      {"a NUL byte in a string", "{\"name\": \"a\0b\"}"s},
      {"a NUL byte outside strings", "{\0}"s},
      {"a valid config, then a NUL byte", "{\"cniVersion\": \"1.0.0\", \"name\": \"x\"}\0"s},
      {"a valid config, then a NUL byte and garbage", "{\"cniVersion\": \"1.0.0\", \"name\": \"x\"}\0[[["s},
      {"invalid UTF-8", "{\"name\": \"\xff\xfe\"}"},
      {"a truncated UTF-8 sequence", "{\"name\": \"\xc3\"}"},
      {"an overlong UTF-8 encoding", "{\"name\": \"\xc0\xaf\"}"},
      {"comments", "{/* c */ \"name\": \"x\"}"},
      {"very deep nesting", std::string(100000, '[') + std::string(100000, ']')},
  }));
  INFO(c.what);
  base::Result<Config> r = base::Error();
  REQUIRE_NOTHROW(r = conf::Parse(cni::Modes(), c.bytes));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kDecoding);
}

TEST_CASE("parse refuses stdin larger than kMaxConfigBytes before decoding it") {
  json j = Base();
  j["args"]["padding"] = std::string(conf::kMaxConfigBytes, 'x');
  auto r = conf::Parse(cni::Modes(), j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kDecoding);
  CHECK_THAT(r.error().msg, Catch::Contains("1048576"));
}

TEST_CASE("parse accepts stdin just under kMaxConfigBytes") {
  json j = Base();
  // Padding where any key goes: the top level takes only erdma-cni's keys.
  j["args"]["padding"] = "";
  const size_t overhead = j.dump().size();
  j["args"]["padding"] = std::string(conf::kMaxConfigBytes - overhead, 'x');
  REQUIRE(j.dump().size() == conf::kMaxConfigBytes);
  CHECK(conf::Parse(cni::Modes(), j.dump()).ok());
}

TEST_CASE("device.resource names the resource the kubelet is asked about") {
  auto c = conf::Parse(cni::Modes(), R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni",
                          "device":{"resource":"aliyun/erdma"}})",
                       false);
  REQUIRE(c.ok());
  CHECK(c->device.by == DeviceSelector::By::kResource);
  CHECK(c->device.value == "aliyun/erdma");
  CHECK(c->device.Describe() == R"(device.resource "aliyun/erdma")");
}

TEST_CASE("device selectors describe themselves with their key and value") {
  CHECK(DeviceSelector{DeviceSelector::By::kName, "eth1", {}}.Describe() == R"(device.name "eth1")");
  CHECK(DeviceSelector{DeviceSelector::By::kMac, "02:00:00:00:00:01", {}}.Describe() ==
        R"(device.mac "02:00:00:00:00:01")");
  CHECK(DeviceSelector{DeviceSelector::By::kPci, "0000:3b:00.1", {}}.Describe() ==
        R"(device.pci "0000:3b:00.1")");
  CHECK(DeviceSelector{DeviceSelector::By::kDeviceId, "x", {}}.Describe() == R"(deviceID "x")");
}

TEST_CASE("versions compare numerically and unparsable text sorts first") {
  CHECK(conf::CompareVersions("0.10.0", "0.9.0") > 0);
  CHECK(conf::CompareVersions("1.0.0", "1.0.0") == 0);
  CHECK(conf::CompareVersions("0.4.0", "1.0.0") < 0);
  CHECK(conf::CompareVersions("1.1.0", "1.0.10") > 0);
  CHECK(conf::CompareVersions("garbage", "0.0.0") < 0);
  CHECK(conf::CompareVersions("0.0.0", "1.0") > 0);
  CHECK(conf::CompareVersions("1.0.0.0", "0.1.0") < 0);
  CHECK(conf::CompareVersions("-1.0.0", "0.0.0") < 0);
}

TEST_CASE("supported versions are listed oldest first") {
  const auto& v = conf::SupportedVersions();
  CHECK(v == std::vector<std::string>{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"});
  for (size_t i = 1; i < v.size(); ++i) CHECK(conf::CompareVersions(v[i - 1], v[i]) < 0);
  CHECK(conf::IsSupportedVersion("1.1.0"));
  CHECK_FALSE(conf::IsSupportedVersion("0.2.0"));
  CHECK_FALSE(conf::IsSupportedVersion("1.1.0 "));
}

TEST_CASE("pick version returns the highest supported offer or nothing") {
  CHECK(conf::PickVersion({"1.0.0", "0.3.1", "1.1.0"}) == "1.1.0");
  CHECK(conf::PickVersion({"2.0.0", "0.4.0"}) == "0.4.0");
  CHECK_FALSE(conf::PickVersion({"0.2.0", "x"}).has_value());
  CHECK_FALSE(conf::PickVersion({}).has_value());
}

}  // namespace

}  // namespace test_unit_config_test

// conf/keys.h: the keys each level of the config accepts; every other key is
// refused, naming its path and the nearest known key.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cni/driver/registry.h"
#include "conf/config.h"

namespace test_unit_config_keys_test {

namespace {

using base::Code;
using nlohmann::json;

json Base() {
  return json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                         "device": {"name": "eth1"}})");
}

base::Result<conf::Config> ParsePatched(const char* patch) {
  json j = Base();
  j.merge_patch(json::parse(patch));
  return conf::Parse(cni::Modes(), j.dump());
}

struct Unknown {
  const char* patch;
  const char* msg;  // the whole message
};

const std::vector<Unknown> kUnknown = {
    {R"({"mdoe": "ipvlan"})", R"(mdoe: not a key of erdma-cni; did you mean mode? Correct it or remove it)"},
    {R"({"ipma": {"type": "host-local"}})",
     "ipma: not a key of erdma-cni; did you mean ipam? Correct it or remove it"},
    {R"({"devcie": {"name": "eth2"}})",
     "devcie: not a key of erdma-cni; did you mean device? Correct it or remove it"},
    {R"({"logfile": "/var/log/erdma-cni.log"})",
     "logfile: not a key of erdma-cni; did you mean logFile? Correct it or remove it"},
    {R"({"device": {"name": "eth1", "requried": true}})",
     "device.requried: not a key of erdma-cni's device; did you mean device.required? Correct it or remove "
     "it"},
    {R"({"device": {"name": null, "pool": {"names": ["eth1"], "name": ["eth2"]}}})",
     "device.pool.name: not a key of erdma-cni's device.pool; did you mean device.pool.names? Correct it or "
     "remove it"},
    {R"({"rdma": {"netnsMdoe": "shared"}})",
     "rdma.netnsMdoe: not a key of erdma-cni's rdma; did you mean rdma.netnsMode? Correct it or remove it"},
    {R"({"smcr": {"pnetID": "AB"}})",
     "smcr.pnetID: not a key of erdma-cni's smcr; did you mean smcr.pnetId? Correct it or remove it"},
    {R"({"routing": {"rulePriorty": 300}})",
     "routing.rulePriorty: not a key of erdma-cni's routing; did you mean routing.rulePriority? Correct it "
     "or "
     "remove it"},
    {R"({"mode": "macvlan", "macvlan": {"mdoe": "passthru"}})",
     "macvlan.mdoe: not a key of erdma-cni's macvlan; did you mean macvlan.mode? Correct it or remove it"},
    {R"({"mode": "ipvlan", "ipvlan": {"mdoe": "l3"}})",
     "ipvlan.mdoe: not a key of erdma-cni's ipvlan; did you mean ipvlan.mode? Correct it or remove it"},
    {R"({"mode": "vf", "vf": {"spoofChk": false}})",
     "vf.spoofChk: not a key of erdma-cni's vf; did you mean vf.spoofchk? Correct it or remove it"},
    // Nothing near: the level's keys are listed.
    {R"({"routing": {"gateway": "10.0.0.1"}})",
     "routing.gateway: not a key of erdma-cni's routing, which takes table, rulePriority, routeMetric and "
     "defaultRoute; remove it"},
    {R"({"mode": "ipvlan", "ipvlan": {"flags": "vepa"}})",
     "ipvlan.flags: not a key of erdma-cni's ipvlan, which takes mode and mac; remove it"},
    {R"({"rdma": {"x": 1}})",
     "rdma.x: not a key of erdma-cni's rdma, which takes netnsMode, setSystemMode, required and softRoce; "
     "remove it"},
    // A key that is not plain text is quoted, never printed raw.
    {R"({"rdma": {"a\nb": 1}})", R"(rdma."a\nb": not a key of erdma-cni's rdma)"},
};

TEST_CASE("an unknown key at every level erdma-cni owns is code 7 naming its path and the nearest key") {
  const Unknown c = GENERATE(from_range(kUnknown));
  INFO("patch: " << c.patch);
  auto r = ParsePatched(c.patch);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK_THAT(r.error().msg, Catch::StartsWith(c.msg));
}

TEST_CASE("an unknown top-level key with no near one lists the keys erdma-cni takes") {
  auto r = ParsePatched(R"({"vendorThing": [1, "two"]})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK_THAT(r.error().msg,
             Catch::StartsWith("vendorThing: not a key of erdma-cni, which takes cniVersion, "));
  CHECK_THAT(r.error().msg, Catch::Contains("rdma, smcr, dataDir") && Catch::EndsWith("; remove it"));
}

TEST_CASE("a misspelt mode is refused before it can fall back to mode move") {
  // Without the refusal, "mdoe" gave mode move: the node's device left for the pod.
  auto r = ParsePatched(R"({"mdoe": "ipvlan", "ipam": {"type": "host-local"}})");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("mdoe: "));
}

TEST_CASE("what CNI, the runtimes and Multus add stays accepted, and anything goes inside their objects") {
  auto r = ParsePatched(R"({
    "cniVersions": ["1.0.0"], "pciBusID": "0000:3b:00.1", "dns": {"nameservers": ["10.96.0.10"], "x": 1},
    "capabilities": {"io.kubernetes.cri.pod-annotations": true, "deviceID": true, "anything": true},
    "runtimeConfig": {"portMappings": [], "whatever": {"deep": 1}},
    "args": {"cni": {"ips": []}, "k8s": {"x": 1}},
    "prevResult": {"cniVersion": "1.0.0", "interfaces": [], "ips": [], "extra": true},
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.9.0.0/24"}]], "vendorOption": {"a": [1]}},
    "cni.dev/valid-attachments": [],
    "smcr": {"sysctls": {"net.smc.wmem": "1048576"}}
  })");
  INFO((r.ok() ? std::string() : r.error().msg));
  REQUIRE(r.ok());
  CHECK(r->ipam["vendorOption"] == json::parse(R"({"a": [1]})"));

  json id = Base();
  id.erase("device");
  id["deviceID"] = "0000:3b:00.1";
  CHECK(conf::Parse(cni::Modes(), id.dump()).ok());
}

TEST_CASE("a key set to null reads as unset, known or not") {
  CHECK(ParsePatched(R"({"vendorThing": null, "routing": {"rulePriorty": null}})").ok());
}

TEST_CASE("device.required is a boolean that defaults to false") {
  auto r = ParsePatched(R"({"device": {"name": null, "resource": "aliyun/erdma", "required": true}})");
  REQUIRE(r.ok());
  CHECK(r->device.by == conf::DeviceSelector::By::kResource);
  CHECK(r->device.required);
  r = ParsePatched(R"({"device": {"name": null, "pool": {"pciVendor": "0x1ded"}, "required": false}})");
  REQUIRE(r.ok());
  CHECK_FALSE(r->device.required);
  r = ParsePatched(R"({"device": {"name": null, "resource": "aliyun/erdma"}})");
  REQUIRE(r.ok());
  CHECK_FALSE(r->device.required);

  r = ParsePatched(R"({"device": {"name": null, "resource": "aliyun/erdma", "required": "yes"}})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK(r.error().msg == "device.required: must be true or false");
}

TEST_CASE("device.required alone is not a selector") {
  auto r = ParsePatched(R"({"device": {"name": null, "required": true}})");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("device: set exactly one of name, mac, pci"));
}

TEST_CASE("mode none with rdma.netnsMode exclusive is a config error") {
  auto r = ParsePatched(R"({"mode": "none", "device": null, "rdma": {"netnsMode": "exclusive"}})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK(r.error().msg ==
        "rdma.netnsMode: mode \"none\" leaves the RDMA device on the node; use \"shared\" or \"auto\"");
  CHECK(ParsePatched(R"({"mode": "none", "device": null, "rdma": {"netnsMode": "shared"}, "prevResult": {}})")
            .ok());
  CHECK(ParsePatched(R"({"rdma": {"netnsMode": "exclusive"}})").ok());
}

TEST_CASE("a conflist entry is checked like ADD except that the runtime may supply the device") {
  CHECK(conf::ParseChainEntry(cni::Modes(), R"({"cniVersion": "1.0.0", "name": "n", "type": "erdma-cni"})")
            .ok());
  auto r = conf::ParseChainEntry(
      cni::Modes(), R"({"cniVersion": "1.0.0", "name": "n", "type": "erdma-cni", "mdoe": "none"})");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("mdoe: not a key of erdma-cni; did you mean mode?"));
  r = conf::ParseChainEntry(cni::Modes(),
                            R"({"cniVersion": "1.0.0", "name": "n", "type": "erdma-cni", "mtu": "9000"})");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().msg, Catch::StartsWith("mtu: "));
}

}  // namespace

}  // namespace test_unit_config_keys_test

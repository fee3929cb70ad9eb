#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "cni/driver/registry.h"
#include "install/entry.h"

namespace test_unit_install_entry_test {

namespace {

using install::Json;

const conf::NodePolicy kNode;  // the built-in defaults

std::string Message(const base::Result<std::vector<std::string>>& r) { return r.ok() ? "" : r.error().msg; }

TEST_CASE("the default entry is deploy/'s none.json and the plugin's parser takes it without a warning") {
  Json e = install::DefaultEntry();
  CHECK(e == Json::parse(R"({
    "type": "erdma-cni",
    "mode": "none",
    "capabilities": {"io.kubernetes.cri.pod-annotations": true},
    "smcr": {"enable": "annotation"},
    "logFile": "/var/log/erdma-cni.log"
  })"));
  // The DaemonSet's ConfigMap holds the same entry (its none.json block).
  std::ifstream yaml(ERDMA_SOURCE_DIR "/deploy/daemonset.yaml");
  REQUIRE(yaml);
  std::string line, block;
  bool in_block = false;
  while (std::getline(yaml, line)) {
    if (in_block && line.rfind("    ", 0) != 0) break;
    if (in_block) block += line + "\n";
    if (line == "  none.json: |") in_block = true;
  }
  CHECK(Json::parse(block, nullptr, false) == e);
  auto w = install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode);
  REQUIRE(w.ok());
  CHECK(w->empty());
}

TEST_CASE("an entry the plugin would refuse is refused at install time, naming the key") {
  Json e = install::DefaultEntry();
  e["mode"] = "mvoe";
  auto w = install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode);
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().msg.find("mode") != std::string::npos);
  Json bad_smcr = install::DefaultEntry();
  bad_smcr["smcr"]["enable"] = "sometimes";
  CHECK_FALSE(install::CheckEntry(bad_smcr, cni::Modes(), "1.0.0", "terway-chainer", kNode).ok());
}

TEST_CASE("an entry whose SMC-R follows the annotation but lacks the capability gets a warning") {
  Json e = install::DefaultEntry();
  e.erase("capabilities");
  auto w = install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode);
  REQUIRE(w.ok());
  REQUIRE(w->size() == 1);
  CHECK(w->front().find("io.kubernetes.cri.pod-annotations") != std::string::npos);
  e["smcr"]["enable"] = "never";
  auto quiet = install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode);
  REQUIRE(quiet.ok());
  CHECK(quiet->empty());
}

TEST_CASE("an entry file must be an erdma-cni object without the runtime's keys") {
  CHECK(install::ParseEntry(R"({"type": "erdma-cni", "mode": "none"})").ok());
  CHECK(install::ParseEntry(R"({"type": "bridge"})").error().msg.find("must be \"erdma-cni\"") !=
        std::string::npos);
  CHECK(install::ParseEntry(R"({"mode": "none"})").error().msg.find("must be \"erdma-cni\"") !=
        std::string::npos);
  CHECK(install::ParseEntry(R"({"type": "erdma-cni", "prevResult": {}})")
            .error()
            .msg.find("set by the runtime") != std::string::npos);
  CHECK_FALSE(install::ParseEntry("not json").ok());
}

TEST_CASE("an entry with a misspelt key is refused with the plugin's own message") {
  Json devcie = install::DefaultEntry();
  devcie["devcie"] = Json{{"name", "eth1"}};
  CHECK(Message(install::CheckEntry(devcie, cni::Modes(), "1.0.0", "terway-chainer", kNode)) ==
        "the erdma-cni entry is not a valid erdma-cni config: devcie: not a key of erdma-cni; did you mean "
        "device? Correct it or remove it");
  Json mdoe = install::DefaultEntry();
  mdoe.erase("mode");
  mdoe["mdoe"] = "none";
  CHECK(Message(install::CheckEntry(mdoe, cni::Modes(), "1.0.0", "terway-chainer", kNode)) ==
        "the erdma-cni entry is not a valid erdma-cni config: mdoe: not a key of erdma-cni; did you mean "
        "mode? Correct it or remove it");
}

TEST_CASE("an entry is checked with ADD's rules, not DEL's, which would only warn") {
  Json e = install::DefaultEntry();
  e["mtu"] = "9000";
  CHECK_THAT(Message(install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode)),
             Catch::Contains("mtu: must be an integer 68..65535"));
}

TEST_CASE("an entry whose dataDir or logFile the node file does not allow is refused") {
  Json e = install::DefaultEntry();
  e["dataDir"] = "/var/lib/erdma-cni";
  auto r = install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidConfig);
  CHECK_THAT(r.error().msg, Catch::Contains("dataDir: \"/var/lib/erdma-cni\" is not allowed on this node") &&
                                Catch::Contains("dataDirs"));

  auto node = conf::ParseNodePolicy(R"({"dataDirs": ["/var/lib/erdma-cni"]})", "/etc/erdma-cni/node.json");
  REQUIRE(node.ok());
  CHECK(install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", *node).ok());
  e["logFile"] = "/tmp/erdma.log";
  CHECK_THAT(Message(install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", *node)),
             Catch::Contains("logFile: \"/tmp/erdma.log\" is not allowed on this node"));
}

TEST_CASE("the entry a conflist holds is checked with the conflist's version and name") {
  Json list = Json::parse(R"({"cniVersion": "1.0.0", "name": "terway-chainer",
                              "plugins": [{"type": "terway"}, {"type": "erdma-cni", "mode": "none",
                                           "capabilities": {"io.kubernetes.cri.pod-annotations": true}}]})");
  auto ok = install::CheckInstalledEntry(list, cni::Modes(), kNode);
  REQUIRE(ok.ok());
  CHECK(ok->empty());
  list["plugins"][1]["mdoe"] = "none";
  CHECK_THAT(Message(install::CheckInstalledEntry(list, cni::Modes(), kNode)),
             Catch::Contains("mdoe: not a key of erdma-cni; did you mean mode?"));
  list["plugins"].erase(1);
  CHECK(install::CheckInstalledEntry(list, cni::Modes(), kNode).ok());
}

}  // namespace

TEST_CASE(
    "an entry that names one node device for every pod of the node is refused, naming the key and the "
    "recipe") {
  for (const auto& [key, device] : {std::pair<std::string, Json>{"device.name", {{"name", "eth1"}}},
                                    {"device.mac", {{"mac", "00:16:3e:00:00:01"}}},
                                    {"device.pci", {{"pci", "0000:00:05.0"}}},
                                    {"device.rdma", {{"rdma", "erdma_0"}}}}) {
    for (const char* mode : {"move", "macvlan"}) {
      Json e = install::DefaultEntry();
      e["mode"] = mode;
      e["device"] = device;
      INFO(key << " in mode " << mode);
      const std::string msg = Message(install::CheckEntry(e, cni::Modes(), "1.0.0", "terway-chainer", kNode));
      CHECK(msg.starts_with(key + ": in a node conflist the entry runs for every pod of the node"));
      CHECK(msg.find("device.resource") != std::string::npos);
      CHECK(msg.find("device.pool") != std::string::npos);
    }
  }
  Json id = install::DefaultEntry();
  id["mode"] = "move";
  id["deviceID"] = "0000:00:05.0";
  CHECK(Message(install::CheckEntry(id, cni::Modes(), "1.0.0", "terway-chainer", kNode))
            .starts_with("deviceID: "));
  // What chooses per pod passes: the kubelet's device, a pool, the runtime's deviceID capability.
  Json resource = install::DefaultEntry();
  resource["mode"] = "move";
  resource["device"] = Json{{"resource", "aliyun/erdma"}};
  CHECK(install::CheckEntry(resource, cni::Modes(), "1.0.0", "terway-chainer", kNode).ok());
  Json pool = install::DefaultEntry();
  pool["mode"] = "move";
  pool["device"] = Json{{"pool", {{"rdmaDriver", "erdma"}}}};
  CHECK(install::CheckEntry(pool, cni::Modes(), "1.0.0", "terway-chainer", kNode).ok());
}

}  // namespace test_unit_install_entry_test

// A state file that is missing, truncated or corrupt: DEL does its best from
// the device claim, the config and the kernel, never crashes or blocks, and
// the device is usable again afterwards; ADD refuses to reuse an attachment
// whose state it cannot read.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_state_test {

using nlohmann::json;

namespace {

void Overwrite(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("DEL with a truncated, corrupt or foreign state brings the device home and sets the file aside") {
  const std::string damage = GENERATE(as<std::string>{}, "truncated", "garbage", "empty", "future-format");
  const std::string mode = GENERATE(as<std::string>{}, "move", "macvlan");
  CAPTURE(damage, mode);
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  kt::ConfigSpec spec{.data_dir = t.DataDir(), .log_file = t.LogFile()};
  if (mode == "macvlan") {
    spec.ipam = json{{"type", "host-local"},
                     {"subnet", kt::kSubnet4},
                     {"rangeStart", "10.9.0.100"},
                     {"rangeEnd", "10.9.0.120"},
                     {"dataDir", t.tmp() + "/ipam"}};
    spec.extra = {{"mode", "macvlan"}};
  }
  json config = kt::PluginConfig(spec);
  const std::string cid = t.ContainerId("state");
  const std::string pod_before = kt::StableSnapshot(t.pod());
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);

  const std::string path = kt::StatePath(t.DataDir(), "erdma-test", cid, "net1");
  const std::string good = Read(path);
  REQUIRE(good.size() > 100);
  if (damage == "truncated") Overwrite(path, good.substr(0, good.size() / 2));
  if (damage == "garbage") Overwrite(path, std::string("\x00\xff{not json", 11));
  if (damage == "empty") Overwrite(path, "");
  if (damage == "future-format") {
    json j = json::parse(good);
    j["format"] = 99;
    Overwrite(path, j.dump());
  }

  // The same attachment cannot be added again over an unreadable state.
  kt::PluginResult re_add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  kt::CheckError(re_add, 106, {"refusing to reuse"});

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK_FALSE(del.timed_out);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::LinkExists(t.node(), eni.name));
  CHECK(kt::FileExists(path + ".unreadable"));
  CHECK_FALSE(kt::FileExists(path));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  if (mode == "macvlan") {
    for (const auto& f : kt::StateFiles(t.tmp() + "/ipam/erdma-test")) {
      INFO("host-local file left: " << f);
      CHECK((f == "lock" || f.rfind("last_reserved_ip", 0) == 0));
    }
  }
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);

  // The device serves the next pod.
  if (mode == "move") {
    // Its addresses were only in the state: the node agent restores them.
    kt::Sh("ip -n " + t.node() + " addr add " + eni.ip4 + "/24 dev " + eni.name + " noprefixroute");
    kt::Sh("ip -n " + t.node() + " route replace 10.9.0.0/24 dev " + eni.name + " metric " +
           std::to_string(eni.metric));
    kt::Sh("ip -n " + t.node() + " route replace default via 10.9.0.1 dev " + eni.name + " metric " +
           std::to_string(eni.metric));
  }
  const std::string next = t.ContainerId("next");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", next, "net1", config));
  INFO("next ADD: " << kt::Describe(add));
  CHECK(add.exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", next, "net1", config)).exit == 0);
}

TEST_CASE(
    "DEL with the state file deleted while the device is in the pod brings the device home by its claim") {
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("nostate");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  std::filesystem::remove(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1"));
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::LinkExists(t.node(), eni.name));
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CHECK(Read(t.LogFile()).find("state file missing, device claim present") != std::string::npos);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
}

TEST_CASE("the last DEL of a network leaves no empty directory for it, and the next ADD makes it again") {
  kt::Topology t;
  const json config =
      kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string net_dir = t.DataDir() + "/" + config.value("name", "");
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    const std::string cid = t.ContainerId("tidy" + std::to_string(round));
    kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    CHECK(kt::FileExists(net_dir));
    REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
    CHECK_FALSE(kt::FileExists(net_dir));
    CHECK(kt::FileExists(t.DataDir()));
  }
}

}  // namespace test_kernel_plugin_state_test

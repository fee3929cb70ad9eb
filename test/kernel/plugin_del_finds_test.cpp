// A DEL that exits 0 has undone the attachment: it finds the state where its ADD recorded it (the node file's
// attachmentsDir), whatever the config says by then, and proves absence only by looking. What ADD records,
// DEL can read: a device name no DEL could read back is refused at ADD. GC never removes an attachment whose
// ADD is running. RunPlugin's invariant (invariant.cpp) checks every DEL here as well.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_del_finds_test {

using nlohmann::json;

namespace {

// A node file like the suite's, with `data_dirs` as its dataDirs.
std::string NodeFile(const kt::Topology& t, const json& data_dirs) {
  const std::string path = t.tmp() + "/node.json";
  json devices = json::array();
  for (int i = 1; i <= 9; ++i) devices.push_back("eth" + std::to_string(i));
  kt::WriteNodeFile(path, json{{"dataDirs", data_dirs},
                               {"logFiles", {"/tmp/"}},
                               {"allowNodeDevices", devices},
                               {"attachmentsDir", kt::TestAttachmentsDir()}}
                              .dump());
  return path;
}

std::string Record(const std::string& cid, const std::string& ifname) {
  return kt::TestAttachmentsDir() + "/@" + cid + "@" + ifname;
}

}  // namespace

TEST_CASE("DEL of a live attachment undoes it whichever key of its config was edited since ADD") {
  const std::string edit =
      GENERATE(as<std::string>{}, "dataDir", "dataDir not allowed", "name", "mode", "device", "ipam",
               "logLevel", "lockTimeoutMs", "ipamTimeoutMs", "logMaxBytes");
  CAPTURE(edit);
  kt::Topology t{{.enis = 2}};
  const std::string cid = t.ContainerId("edited");
  json config = kt::PluginConfig(
      {.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  // What ADD recorded reads back as DEL reads it: the place of its state.
  const json record = json::parse(kt::Sh("cat " + Record(cid, "net1")).out, nullptr, false);
  CHECK(record ==
        json{{"containerID", cid}, {"ifName", "net1"}, {"dataDir", t.DataDir()}, {"network", "erdma-test"}});

  json edited = config;
  if (edit == "dataDir") edited["dataDir"] = t.tmp() + "/elsewhere";
  if (edit == "dataDir not allowed") edited["dataDir"] = "/opt/erdma-nowhere";
  if (edit == "name") edited["name"] = "renamed";
  if (edit == "mode") edited["mode"] = "macvlan";
  if (edit == "device") edited["device"] = {{"name", "eth2"}};
  if (edit == "ipam") {
    edited["addresses"] = "ipam";
    edited["ipam"] = {{"type", "host-local"}, {"subnet", kt::kSubnet4}, {"dataDir", t.tmp() + "/ipam"}};
  }
  if (edit == "logLevel") edited["logLevel"] = "verbose";
  if (edit == "lockTimeoutMs") edited["lockTimeoutMs"] = "soon";
  if (edit == "ipamTimeoutMs") edited["ipamTimeoutMs"] = -1;
  if (edit == "logMaxBytes") edited["logMaxBytes"] = "big";
  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(edited, add.json)));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
  CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir()).empty());
  CHECK_FALSE(kt::FileExists(Record(cid, "net1")));
  const std::string log = kt::Sh("cat " + t.LogFile()).out;
  INFO("log: " << log);
  if (edit.starts_with("dataDir") || edit == "name")
    CHECK(log.find("the state is where ADD recorded it") != std::string::npos);
  if (edit.starts_with("log") || edit.ends_with("TimeoutMs"))
    CHECK(log.find("DEL: ignored: " + edit + ":") != std::string::npos);

  // ADD refuses what DEL lets through: a logging or timeout key that does not parse is code 7 naming it.
  if (edit.starts_with("log") || edit.ends_with("TimeoutMs")) {
    kt::PluginResult again = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("again"), "net1", edited));
    kt::CheckError(again, 7, {edit + ":"});
    CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  }
}

TEST_CASE("DEL whose recorded dataDir the node file no longer allows fails naming it and keeps everything") {
  kt::Topology t;
  const std::string cid = t.ContainerId("unallowed");
  const std::string data_dir = t.tmp() + "/data";
  json config = kt::PluginConfig({.data_dir = data_dir, .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginCall add_call = kt::Call(t, "ADD", cid, "net1", config);
  add_call.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + NodeFile(t, {"/tmp/"}));
  kt::PluginResult add = kt::RunPlugin(add_call);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);

  // The node admin narrowed dataDirs: DEL cannot undo what it may not read, and says so.
  kt::PluginCall del_call = kt::Call(t, "DEL", cid, "net1", config);
  del_call.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + NodeFile(t, {"/run/erdma-cni"}));
  kt::PluginResult refused = kt::RunPlugin(del_call);
  INFO("DEL refused: " << kt::Describe(refused));
  kt::CheckError(refused, 7, {"dataDir: \"" + data_dir + "\" is not allowed"});
  CHECK(refused.json.value("msg", "").find("the state of this attachment is there") != std::string::npos);
  CHECK(kt::FileExists(kt::StatePath(data_dir, "erdma-test", cid, "net1")));
  CHECK(kt::FileExists(Record(cid, "net1")));
  CHECK(kt::LinkExists(t.pod(), "net1"));

  // Allowed again, the same DEL undoes it.
  del_call.extra_env.back() = "ERDMA_CNI_NODE_CONFIG=" + NodeFile(t, {"/tmp/"});
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("DEL with a dataDir the node file does not allow and no record of the attachment is code 7") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = "/opt/erdma-nowhere", .log_file = t.LogFile()});
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", t.ContainerId("nowhere"), "net1", config));
  INFO("DEL: " << kt::Describe(del));
  kt::CheckError(del, 7, {"dataDir: \"/opt/erdma-nowhere\" is not allowed"});
  CHECK(del.json.value("msg", "").find("DEL cannot look there") != std::string::npos);
}

TEST_CASE("a dataDir directly under the sticky /tmp: ADD writes there and DEL reads it back and undoes it") {
  kt::Topology t;
  const std::string cid = t.ContainerId("sticky");
  const std::string data_dir = "/tmp/" + cid;  // as a user's "/tmp/erdma"
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{data_dir};
  json config = kt::PluginConfig({.data_dir = data_dir, .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::FileExists(kt::StatePath(data_dir, "erdma-test", cid, "net1")));
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(data_dir).empty());
}

TEST_CASE(
    "a node device whose name holds a control character is refused at ADD with code 7, nothing changed") {
  kt::Topology t;
  // The kernel takes "w\x01x" (dev_valid_name refuses only '/', ':' and whitespace); no DEL could read it
  // back.
  kt::ShOk("ip -n " + t.node() + " link set dev " + t.eni(1).name + " down");
  kt::ShOk("ip -n " + t.node() + " link set dev " + t.eni(1).name + " name \"$(printf 'w\\001x')\"");
  kt::ShOk("ip -n " + t.node() + " link set dev \"$(printf 'w\\001x')\" up");
  const std::string cid = t.ContainerId("ctrl");
  json config = kt::PluginConfig(
      {.device = "", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  config["device"] = {{"mac", t.eni(1).mac}};
  // `ip -j` prints the name unescaped, which no JSON reader takes: the node is compared as text.
  const std::string node_links = "ip -n " + t.node() + " -o link show | sed 's/^[0-9]*: //' | sort";
  const std::string node_before = kt::ShOk(node_links);
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  kt::CheckError(add, 7, {"w\\x01x"});
  CHECK(add.json.value("msg", "").find("cannot record") != std::string::npos);
  CHECK(kt::ShOk(node_links) == node_before);
  CHECK(node_before.find(t.eni(1).mac) != std::string::npos);
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir()).empty());
  CHECK_FALSE(kt::FileExists(Record(cid, "net1")));
}

TEST_CASE("GC whose valid-attachments omit an attachment whose ADD is running leaves it to that ADD") {
  kt::Topology t;
  const std::string cid = t.ContainerId("racing");
  // An IPAM plugin that takes two seconds to answer ADD: GC runs meanwhile.
  const std::string bin = t.tmp() + "/bin";
  kt::ShOk(
      "mkdir -p " + bin +
      " && printf '#!/bin/sh\\n[ \"$CNI_COMMAND\" = ADD ] && sleep 2\\nexec /usr/lib/cni/host-local\\n' > " +
      bin + "/slow-ipam && chmod +x " + bin + "/slow-ipam");
  json config = kt::PluginConfig({.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["addresses"] = "ipam";
  config["ipam"] = {{"type", "slow-ipam"},
                    {"subnet", kt::kSubnet4},
                    {"rangeStart", "10.9.0.100"},
                    {"rangeEnd", "10.9.0.120"},
                    {"dataDir", t.tmp() + "/ipam"}};
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginCall add_call = kt::Call(t, "ADD", cid, "net1", config);
  add_call.cni_path =
      bin + ":" + std::filesystem::path(kt::PluginBinary()).parent_path().string() + ":/usr/lib/cni";
  auto adding = std::async(std::launch::async, [&add_call] { return kt::RunPlugin(add_call); });
  // GC once the ADD holds its lock and has journaled (its state is there), while IPAM sleeps.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  json gc_config = config;
  gc_config["cni.dev/valid-attachments"] = json::array();
  kt::PluginResult gc = kt::RunPlugin(kt::Gc(t, gc_config));
  kt::PluginResult add = adding.get();
  INFO("GC: " << kt::Describe(gc) << "\nADD: " << kt::Describe(add));
  CHECK(gc.exit == 0);
  REQUIRE(add.exit == 0);
  // The pod keeps its device and address, and its state, claim and lease say so.
  CHECK(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK_FALSE(kt::ClaimsFor(t.DataDir(), cid).empty());
  CHECK(kt::FileExists(t.tmp() + "/ipam/erdma-test/10.9.0.100"));
  const std::string log = kt::Sh("cat " + t.LogFile()).out;
  INFO("log: " << log);
  CHECK(log.find("GC: leaving " + cid + "/net1") != std::string::npos);

  // Its own DEL then undoes it whole, the lease included.
  kt::PluginCall del_call = kt::Call(t, "DEL", cid, "net1", config);
  del_call.cni_path = add_call.cni_path;
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK_FALSE(kt::FileExists(t.tmp() + "/ipam/erdma-test/10.9.0.100"));
}

}  // namespace test_kernel_plugin_del_finds_test

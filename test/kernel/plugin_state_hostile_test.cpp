// Everything read back from the state directory is hostile input: a state
// or claim file with values ADD never writes, a state naming a device its
// claim does not, a state directory others may write, and the older,
// ambiguous state names. Each is refused (or found to be another
// attachment's) and the node is exactly as before: links, names, addresses,
// routes and rules, and no file outside dataDir written or run.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_state_hostile_test {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Overwrite(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

const std::string kNet = "erdma-test";

}  // namespace

TEST_CASE(
    "DEL of a state whose IPAM type climbs out of CNI_PATH runs nothing, gives code 106, changes nothing") {
  kt::Topology t;
  const std::string marker = t.tmp() + "/ran";
  const std::string script = t.tmp() + "/x.sh";
  Overwrite(script, "#!/bin/sh\ntouch " + marker + "\necho '{\"cniVersion\":\"1.0.0\"}'\n");
  ::chmod(script.c_str(), 0755);
  json config =
      kt::PluginConfig({.data_dir = t.DataDir(),
                        .log_file = t.LogFile(),
                        .ipam = json{{"type", "static"}, {"addresses", {{{"address", "10.9.0.77/24"}}}}}});
  const std::string cid = t.ContainerId("climb");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  const std::string path = kt::StatePath(t.DataDir(), kNet, cid, "net1");
  json st = json::parse(Read(path));
  bool edited = false;
  for (auto& step : st["steps"])
    if (step["op"] == "ipam") {
      step["type"] = "../../../../../../../../../../.." + script;
      edited = true;
    }
  REQUIRE(edited);
  Overwrite(path, st.dump());
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO(kt::Describe(del));
  CHECK_FALSE(kt::FileExists(marker));  // root never ran it
  kt::CheckError(del, 106, {"type"});
  CHECK_THAT(del.json.value("msg", ""), Catch::Contains(path) && Catch::Contains("remove the file"));
  CHECK(kt::SettledDiff(node, t.node()) == "");
  CHECK(kt::SettledDiff(pod, t.pod()) == "");
  CHECK(kt::FileExists(path));
}

TEST_CASE("a claim file alone, naming lo's all-zero MAC, makes DEL touch no link of the node") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("claim");
  for (const std::string& dir : {std::string("/devices"), "/" + kNet})
    fs::create_directories(t.DataDir() + dir);
  fs::permissions(t.DataDir(), fs::perms::owner_all);
  // One claim names the state as this build names it, one as older builds did.
  const std::string states[] = {kt::StatePath(t.DataDir(), kNet, cid, "lo"),
                                t.DataDir() + "/" + kNet + "/" + cid + "-lo"};
  for (int i = 0; i < 2; ++i)
    Overwrite(t.DataDir() + "/devices/x" + std::to_string(i), json{{"network", kNet},
                                                                   {"containerID", cid},
                                                                   {"ifName", "lo"},
                                                                   {"state", states[i]},
                                                                   {"device", "x" + std::to_string(i)},
                                                                   {"mac", "00:00:00:00:00:00"},
                                                                   {"pci", ""}}
                                                                  .dump());
  const std::string node = kt::StableSnapshot(t.node());
  kt::PluginCall call = kt::Call(t, "DEL", cid, "lo", config);
  call.netns = "";  // containerd's second DEL
  kt::PluginResult del = kt::RunPlugin(call);
  INFO(kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::LinkExists(t.node(), "lo"));
  CHECK(kt::SettledDiff(node, t.node()) == "");
}

TEST_CASE(
    "a crafted state naming a node link its claim does not name is refused by DEL, the node keeps it all") {
  const std::string variant = GENERATE(as<std::string>{}, "the node's own rule", "values ADD could write");
  CAPTURE(variant);
  kt::Topology t({.enis = 2});
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  // A real attachment, which must survive too.
  const std::string real = t.ContainerId("real");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", real, "net1", config)).exit == 0);
  const json eth2 = kt::LinkJson(t.node(), "eth2");
  REQUIRE(eth2.is_object());
  const std::string cid = t.ContainerId("forged");
  json rule = {{"family", 4}, {"priority", 32766}, {"table", 254}};
  if (variant == "values ADD could write")
    rule = {{"family", 4}, {"priority", 200}, {"src", "10.9.0.99/32"}, {"table", 200}};
  json st = {
      {"format", 1},
      {"network", kNet},
      {"containerID", cid},
      {"ifName", "eth2"},
      {"netns", "/run/netns/" + t.node()},  // the node itself, as the pod
      {"podIfName", "eth2"},
      {"table", 200},
      {"rdmaDevice", ""},
      {"rdmaMode", ""},
      {"device",
       {{"name", "ethx"},
        {"index", eth2["ifindex"]},
        {"mac", eth2["address"]},
        {"mtu", 1500},
        {"up", true},
        {"kind", "veth"},
        {"addrs",
         json::array(
             {{{"ifindex", eth2["ifindex"]}, {"local", "192.0.2.77/24"}, {"scope", 0}, {"flags", 0}}})},
        {"routes", json::array()}}},
      {"steps", json::array({{{"op", "move"}, {"name", "eth2"}}, {{"op", "rule"}, {"rule", rule}}})},
      {"complete", true},
      {"result", nullptr}};
  const std::string path = kt::StatePath(t.DataDir(), kNet, cid, "eth2");
  Overwrite(path, st.dump());
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());
  for (const bool second_del : {false, true}) {
    kt::PluginCall call = kt::Call(t, "DEL", cid, "eth2", config);
    if (second_del) call.netns = "";  // containerd's second DEL
    kt::PluginResult del = kt::RunPlugin(call);
    INFO(kt::Describe(del) << "\nlog:\n" << Read(t.LogFile()));
    kt::CheckError(del, 106, {variant == "values ADD could write" ? "claim" : "rule"});
    CHECK(kt::SettledDiff(node, t.node()) == "");
    CHECK(kt::SettledDiff(pod, t.pod()) == "");
  }
  CHECK(kt::LinkExists(t.node(), "eth2"));
  CHECK(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::FileExists(path));
}

TEST_CASE(
    "DEL, CHECK and GC refuse a dataDir others may write or reached through a symlink, changing nothing") {
  const std::string variant = GENERATE(as<std::string>{}, "mode 0777", "another user's", "a symlink");
  CAPTURE(variant);
  kt::Topology t;
  const std::string real = t.tmp() + "/real";
  json config = kt::PluginConfig({.data_dir = real, .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("dir");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  REQUIRE(add.exit == 0);
  config = kt::AsRuntimeWouldForDel(config, add.json);  // CHECK needs the cached result
  json used = config;
  if (variant == "mode 0777") ::chmod(real.c_str(), 0777);
  if (variant == "another user's") REQUIRE(::chown(real.c_str(), 65534, 65534) == 0);
  if (variant == "a symlink") {
    fs::create_directory_symlink(real, t.tmp() + "/link");
    used["dataDir"] = t.tmp() + "/link";
  }
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());
  const auto files = kt::StateFiles(real);
  const std::string why = variant == "a symlink" ? "symlink" : variant == "mode 0777" ? "0777" : "owned by";
  kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", used));
  INFO("CHECK: " << kt::Describe(check));
  kt::CheckError(check, 5, {why});
  // DEL goes where ADD recorded the state, not where the config points now: the real directory, refused
  // only while others may write it.
  if (variant != "a symlink") {
    kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", used));
    INFO("DEL: " << kt::Describe(del));
    kt::CheckError(del, 5, {why});
  }
  json gc = used;
  gc.erase("prevResult");
  gc["cniVersion"] = "1.1.0";
  gc["cni.dev/valid-attachments"] = json::array();
  kt::PluginResult r = kt::RunPlugin(kt::Gc(t, gc));
  INFO("GC: " << kt::Describe(r));
  kt::CheckError(r, 5);
  CHECK(kt::SettledDiff(node, t.node()) == "");
  CHECK(kt::SettledDiff(pod, t.pod()) == "");
  CHECK(kt::StateFiles(real) == files);

  // Made private again, DEL finishes (through the symlink too: it is never followed).
  ::chmod(real.c_str(), 0700);
  REQUIRE(::chown(real.c_str(), 0, 0) == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", used)).exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
}

TEST_CASE("a move ADD leaves alone the files of a directory that children/<device> points to") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string victim = t.tmp() + "/victim";
  fs::create_directories(victim);
  Overwrite(victim + "/keep", "precious\n");
  fs::create_directories(t.DataDir() + "/children");
  fs::permissions(t.DataDir(), fs::perms::owner_all);
  fs::permissions(t.DataDir() + "/children", fs::perms::owner_all);
  fs::create_directory_symlink(victim, t.DataDir() + "/children/eth1");
  const std::string cid = t.ContainerId("child-link");
  kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  CHECK(Read(victim + "/keep") == "precious\n");
  kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  CHECK(Read(victim + "/keep") == "precious\n");
}

TEST_CASE(
    "an attachment whose state has today's older name is DEL'd by it, and never by the pod its name also "
    "fits") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string p = t.ContainerId("p");
  // (p-q, net1) attached; its state and claim as today's build writes them.
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", p + "-q", "net1", config));
  REQUIRE(add.exit == 0);
  const std::string now = kt::StatePath(t.DataDir(), kNet, p + "-q", "net1");
  const std::string legacy = t.DataDir() + "/" + kNet + "/" + p + "-q-net1";
  REQUIRE(kt::FileExists(now));
  fs::rename(now, legacy);
  const std::string claim = t.DataDir() + "/devices/eth1";
  json owner = json::parse(Read(claim));
  owner["state"] = legacy;
  Overwrite(claim, owner.dump());
  // That build kept no index of its claims.
  fs::remove_all(t.DataDir() + "/devices/.by:id");
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());

  // (p, q-net1): the same old name, another attachment. Nothing of it here.
  kt::PluginResult other = kt::RunPlugin(kt::Call(t, "DEL", p, "q-net1", config));
  INFO(kt::Describe(other));
  CHECK(other.exit == 0);
  CHECK(kt::SettledDiff(node, t.node()) == "");
  CHECK(kt::SettledDiff(pod, t.pod()) == "");
  CHECK(kt::FileExists(legacy));

  // CHECK and DEL of the owner find it under the old name.
  const json cached = kt::AsRuntimeWouldForDel(config, add.json);
  kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", p + "-q", "net1", cached));
  INFO(kt::Describe(check));
  CHECK(check.exit == 0);
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", p + "-q", "net1", cached));
  INFO(kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(legacy));
  CHECK(kt::ClaimsFor(t.DataDir(), p).empty());
}

TEST_CASE("ADD refuses a container ID too long for its state file with code 4 and changes nothing") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());
  const std::string cid = std::string(244, 'a');
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO(kt::Describe(add));
  kt::CheckError(add, 4, {"CNI_CONTAINERID"});
  CHECK(kt::SettledDiff(node, t.node()) == "");
  CHECK(kt::SettledDiff(pod, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(t.DataDir()));
}

TEST_CASE(
    "a claim that is a planted hard link of another file is refused with code 106 naming it, untouched") {
  kt::Topology t;
  const json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  // A first attachment makes the data dir, as a node that ran pods has it.
  const std::string first = t.ContainerId("first");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", first, "net1", config));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", first, "net1", kt::AsRuntimeWouldForDel(config, add.json))).exit ==
          0);
  // Another file of the same file system, linked in as eth1's claim.
  const std::string victim = t.tmp() + "/precious", claim = t.DataDir() + "/devices/eth1";
  Overwrite(victim, "precious\n");
  REQUIRE(::link(victim.c_str(), claim.c_str()) == 0);
  const std::string node = kt::StableSnapshot(t.node()), pod = kt::StableSnapshot(t.pod());
  const std::string cid = t.ContainerId("planted");
  kt::PluginResult r = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(r));
  kt::CheckError(r, 106, {claim, "2 links", "index explains 1"});
  CHECK(Read(victim) == "precious\n");
  CHECK(kt::SettledDiff(node, t.node()) == "");
  CHECK(kt::SettledDiff(pod, t.pod()) == "");
  // The link gone, the device is the pod's as usual.
  REQUIRE(::unlink(claim.c_str()) == 0);
  add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD after: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json))).exit == 0);
  CHECK(Read(victim) == "precious\n");
}

}  // namespace test_kernel_plugin_state_hostile_test

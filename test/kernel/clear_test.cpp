// `erdma-cni clear`: an admin clears an attachment whose DEL keeps failing,
// or a share left behind by a container that never ran, and the device is
// free again for the next pod.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_clear_test {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

// erdma-cni run by hand on the node, as an admin does: no CNI_* variables.
kt::ShResult Admin(const kt::Topology& t, const std::string& args) {
  return kt::Sh("ip netns exec " + t.node() + " env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin " +
                kt::PluginBinary() + " " + args);
}

std::string Describe(const kt::ShResult& r) {
  return "exit " + std::to_string(r.exit) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

// An IPAM plugin whose ADD gives 10.9.0.50/24 and whose DEL always fails.
std::string FailingDelIpam(const kt::Topology& t) {
  std::string dir = t.tmp() + "/bin";
  fs::create_directories(dir);
  const std::string path = dir + "/stuck-ipam";
  std::ofstream(path)
      << "#!/bin/sh\ncase \"$CNI_COMMAND\" in\n"
      << "ADD) echo "
         "'{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.0.50/24\",\"gateway\":\"10.9.0.1\"}]}' ;;\n"
      << "DEL) echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"lease store unreachable\"}'; exit 1 ;;\n"
      << "VERSION) echo '{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"0.4.0\",\"1.0.0\"]}' ;;\n"
      << "*) : ;;\nesac\n";
  fs::permissions(path, fs::perms::owner_all);
  return dir;
}

}  // namespace

TEST_CASE(
    "clear refuses while the pod netns has tasks and with --skip-ipam clears an attachment whose IPAM DEL "
    "always fails and brings the device home") {
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const std::string bin = FailingDelIpam(t);
  json config = kt::PluginConfig(
      {.data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = json{{"type", "stuck-ipam"}}});
  const std::string cid = t.ContainerId("stuck");
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.cni_path = bin;
  kt::PluginResult added = kt::RunPlugin(add);
  INFO("ADD: " << kt::Describe(added));
  REQUIRE(added.exit == 0);
  kt::PluginCall del = add;
  del.command = "DEL";
  del.stdin_text = kt::AsRuntimeWouldForDel(config, added.json).dump();
  kt::PluginResult failed = kt::RunPlugin(del);
  INFO("DEL: " << kt::Describe(failed));
  REQUIRE(failed.exit != 0);
  const std::string state = kt::StatePath(t.DataDir(), "erdma-test", cid, "net1");
  REQUIRE(kt::FileExists(state));

  // diag shows it.
  kt::ShResult diag = Admin(t, "diag --data-dir " + t.DataDir());
  CHECK(diag.out.find(cid) != std::string::npos);

  const std::string clear = "clear --container " + cid + " --data-dir " + t.DataDir() + " --cni-path " + bin;
  // A task in the pod's netns: the pod may be running; refused without --force.
  const std::string pid =
      kt::ShOk("ip netns exec " + t.pod() + " sh -c 'exec sleep 30' >/dev/null 2>&1 & echo $!");
  kt::Sh("sleep 0.3");
  kt::ShResult refused = Admin(t, clear + " --skip-ipam");
  INFO("clear with a task in the pod: " << Describe(refused));
  CHECK(refused.exit == 1);
  CHECK(refused.out.find("has tasks") != std::string::npos);
  CHECK(refused.out.find("--force") != std::string::npos);
  CHECK(kt::FileExists(state));
  kt::Sh("kill " + pid + "; sleep 0.3");

  // Without --skip-ipam the IPAM failure keeps the attachment, and says how on.
  kt::ShResult kept = Admin(t, clear);
  INFO("clear without --skip-ipam: " << Describe(kept));
  CHECK(kept.exit == 1);
  CHECK(kept.out.find("lease store unreachable") != std::string::npos);
  CHECK(kept.out.find("--skip-ipam") != std::string::npos);
  CHECK(kt::FileExists(state));

  kt::ShResult cleared = Admin(t, clear + " --skip-ipam");
  INFO("clear --skip-ipam: " << Describe(cleared));
  CHECK(cleared.exit == 0);
  CHECK(cleared.out.find("not put back") != std::string::npos);
  CHECK(cleared.out.find("stuck-ipam") != std::string::npos);
  CHECK_FALSE(kt::FileExists(state));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CHECK(kt::LinkExists(t.node(), eni.name));
  CHECK(kt::Addresses(t.node(), eni.name) == std::vector<std::string>{eni.ip4 + "/24"});
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));

  // The device is free: the next pod's ADD takes it.
  json next_config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string next = t.ContainerId("next");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", next, "net1", next_config)).exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", next, "net1", next_config)).exit == 0);
  // Nothing left to clear.
  CHECK(Admin(t, clear).out.find("nothing") != std::string::npos);
}

TEST_CASE(
    "clear removes a macvlan share naming a container that never ran so that a move of the parent "
    "succeeds") {
  kt::Topology t({.enis = 2, .pods = 2});
  json holder_config = kt::PluginConfig({.name = "erdma-move",
                                         .device = t.eni(2).name,
                                         .data_dir = t.DataDir(),
                                         .log_file = t.LogFile(),
                                         .addresses = "inherit"});
  const std::string holder = t.ContainerId("holder");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", holder, "net1", holder_config, 0)).exit == 0);
  const std::string holder_state = kt::StatePath(t.DataDir(), "erdma-move", holder, "net1");
  REQUIRE(kt::FileExists(holder_state));
  // A share of eth1 naming a container that never ran, whose state path
  // leads to a state that is not its own.
  const std::string ghost = t.ContainerId("never-ran");
  fs::create_directories(t.DataDir() + "/children/" + t.eni(1).name);
  std::ofstream(t.DataDir() + "/children/" + t.eni(1).name + "/stray") << json{
      {"network", "erdma-move"},
      {"containerID", ghost},
      {"ifName", "net1"},
      {"state", holder_state},
      {"device", t.eni(1).name},
      {"mac", ""},
      {"pci", ""}}.dump();
  fs::permissions(t.DataDir() + "/children", fs::perms::owner_all);
  fs::permissions(t.DataDir() + "/children/" + t.eni(1).name, fs::perms::owner_all);

  json move_config = kt::PluginConfig(
      {.name = "erdma-move", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string mover = t.ContainerId("mover");
  kt::PluginResult blocked = kt::RunPlugin(kt::Call(t, "ADD", mover, "net1", move_config, 1));
  INFO("move ADD with the stray share: " << kt::Describe(blocked));
  kt::CheckError(blocked, 11, {ghost});

  kt::ShResult cleared = Admin(t, "clear --container " + ghost + " --data-dir " + t.DataDir());
  INFO("clear: " << Describe(cleared));
  CHECK(cleared.exit == 0);
  CHECK(cleared.out.find("share of " + t.eni(1).name) != std::string::npos);
  CHECK(cleared.out.find("removed") != std::string::npos);
  CHECK_FALSE(kt::FileExists(t.DataDir() + "/children/" + t.eni(1).name + "/stray"));
  CHECK(kt::FileExists(holder_state));  // not the ghost's to clear

  kt::PluginResult moved = kt::RunPlugin(kt::Call(t, "ADD", mover, "net1", move_config, 1));
  INFO("move ADD after clear: " << kt::Describe(moved));
  REQUIRE(moved.exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", mover, "net1", move_config, 1)).exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", holder, "net1", holder_config, 0)).exit == 0);
}

}  // namespace test_kernel_clear_test

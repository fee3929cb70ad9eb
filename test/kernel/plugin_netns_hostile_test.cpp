// The pod's netns, given by the runtime (CNI_NETNS) or recorded at ADD, is
// input: the node's own netns is never taken for a pod's, whatever path
// names it, and DEL looks for the device where ADD put it when the runtime
// names another live netns, so that the device is never stranded.
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_netns_hostile_test {

using nlohmann::json;

namespace {

json InheritConfig(const kt::Topology& t) {
  return kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
}

// A bind mount of the node's netns, as a runtime would make for a pod.
class NetnsBind {
 public:
  NetnsBind(const std::string& from, const std::string& at) : at_(at) {
    std::ofstream(at).flush();
    mounted_ = ::mount(from.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) == 0;
  }
  ~NetnsBind() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  NetnsBind(const NetnsBind&) = delete;
  NetnsBind& operator=(const NetnsBind&) = delete;
  bool mounted() const { return mounted_; }

 private:
  std::string at_;
  bool mounted_ = false;
};

// A process that lives in the node's netns, for /proc/<pid>/ns/net.
class NodeProcess {
 public:
  explicit NodeProcess(const std::string& node) {
    // `ip netns exec` execs the command: $! is sleep's pid.
    pid_ = std::stoi(kt::ShOk("ip netns exec " + node + " sleep 120 >/dev/null 2>&1 & echo $!"));
  }
  ~NodeProcess() { kt::Sh("kill " + std::to_string(pid_)); }
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;
  std::string NetnsPath() const { return "/proc/" + std::to_string(pid_) + "/ns/net"; }

 private:
  int pid_ = 0;
};

}  // namespace

TEST_CASE("ADD refuses the node's own netns by every path that names it and changes nothing") {
  kt::Topology t;
  const json config = InheritConfig(t);
  NodeProcess in_node(t.node());
  NetnsBind bind("/run/netns/" + t.node(), t.tmp() + "/node-netns-bind");
  REQUIRE(bind.mounted());
  // The plugin runs in the node's netns: /proc/self and /proc/thread-self
  // are the plugin's own.
  const std::vector<std::string> spellings = {"/run/netns/" + t.node(), "/proc/self/ns/net",
                                              "/proc/thread-self/ns/net", in_node.NetnsPath(),
                                              t.tmp() + "/node-netns-bind"};
  const std::string node_before = kt::StableSnapshot(t.node());
  for (const std::string& path : spellings) {
    CAPTURE(path);
    kt::PluginCall call = kt::Call(t, "ADD", t.ContainerId("self"), "net1", config);
    call.netns = path;
    kt::PluginResult r = kt::RunPlugin(call);
    INFO(kt::Describe(r));
    kt::CheckError(r, 4, {"CNI_NETNS"});
    CHECK(r.json.value("msg", "").find("node's own network namespace") != std::string::npos);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK_FALSE(kt::FileExists(t.DataDir()));  // not even dataDir was made
  }
}

TEST_CASE(
    "DEL and CHECK given the node's own netns do not touch the node's rules and bring the device home") {
  kt::Topology t;
  const json config = InheritConfig(t);
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("nodens");
  // A node rule shaped like the pod's policy rule: if DEL took the node for
  // the pod, it would delete it.
  kt::ShOk("ip -n " + t.node() + " rule add from " + eni.ip4 + " lookup 200 priority 200");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const json del_config = kt::AsRuntimeWouldForDel(config, add.json);

  kt::PluginCall check = kt::Call(t, "CHECK", cid, "net1", del_config);
  check.netns = "/run/netns/" + t.node();
  kt::PluginResult checked = kt::RunPlugin(check);
  INFO("CHECK: " << kt::Describe(checked));
  kt::CheckError(checked, 4, {"CNI_NETNS"});

  kt::PluginCall del = kt::Call(t, "DEL", cid, "net1", del_config);
  del.netns = "/proc/self/ns/net";
  kt::PluginResult deleted = kt::RunPlugin(del);
  INFO("DEL: " << kt::Describe(deleted));
  CHECK(deleted.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");  // eth1 home, the node's rule still there
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

TEST_CASE("DEL given another live pod's netns finds the device where ADD put it and brings it home") {
  kt::Topology t({.pods = 2});
  const json config = InheritConfig(t);
  const std::string cid = t.ContainerId("otherns");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod0_before = kt::StableSnapshot(t.pod(0));
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config, 0));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::LinkExists(t.pod(0), "net1"));

  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json), 1));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod0_before, t.pod(0)) == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

}  // namespace test_kernel_plugin_netns_hostile_test

// Several devices in one attachment (device.count, device.pool): a group of
// attachments, one per device, each with its own interface, table and rule,
// all or nothing at ADD, undone by one DEL (cni/command/group.h).
#include <catch2/catch.hpp>
#include <fstream>
#include <iostream>
#include <set>

#include "base/fault.h"
#include "test/kernel/harness.h"
#include "test/kernel/skip.h"
#include "test/kubelet/fake_kubelet.h"

namespace test_kernel_plugin_group_test {

using nlohmann::json;

namespace {

struct Group {
  kt::Topology t;
  json config;

  explicit Group(int enis, int pods = 1, bool primary = false)
      : t({.enis = enis, .pods = pods, .primary = primary}) {
    config = kt::PluginConfig(
        {.device = "", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  }
  void Pool(int first, int last, const json& count) {
    json names = json::array();
    for (int i = first; i <= last; ++i) names.push_back(t.eni(i).name);
    config["device"] = {{"pool", {{"names", names}}}, {"count", count}};
  }
  kt::PluginCall Call(const std::string& command, const std::string& cid, int pod = 0,
                      const std::string& ifname = "net1") {
    return kt::Call(t, command, cid, ifname, config, pod);
  }
  kt::PluginResult Run(const std::string& command, const std::string& cid, int pod = 0,
                       std::vector<std::string> env = {}) {
    kt::PluginCall c = Call(command, cid, pod);
    c.extra_env = std::move(env);
    return kt::RunPlugin(c);
  }
  // Every ENI at home under its own name, nothing of ours in the pod or dataDir.
  void CheckHome(int enis, const std::string& cid) {
    for (int i = 1; i <= enis; ++i) CHECK(kt::LinkExists(t.node(), t.eni(i).name));
    CHECK(kt::StateFiles(t.DataDir() + "/" + config.value("name", "")).empty());
    CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  }
};

std::vector<std::string> Interfaces(const json& result) {
  std::vector<std::string> names;
  for (const auto& i : result.value("interfaces", json::array()))
    if (!i.value("sandbox", "").empty()) names.push_back(i.value("name", ""));
  return names;
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE(
    "a pod given eight devices gets eight interfaces, each with its own table and rule, its routes in main "
    "at metric 200 + k, CHECK passes, one DEL undoes all",
    "[sticky]") {
  Group g(8);
  g.Pool(1, 8, "all");
  const std::string cid = g.t.ContainerId("eight");
  const std::string pod_before = kt::StableSnapshot(g.t.pod(0));
  kt::PluginResult add = g.Run("ADD", cid);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const std::vector<std::string> want = {"net1", "net2", "net3", "net4", "net5", "net6", "net7", "net8"};
  CHECK(Interfaces(add.json) == want);
  std::set<long> tables;
  for (int k = 0; k < 8; ++k) {
    INFO("interface " << want[k] << " on " << g.t.eni(k + 1).name);
    CHECK(kt::Addresses(g.t.pod(0), want[k]) == std::vector<std::string>{g.t.eni(k + 1).ip4 + "/24"});
    long priority = 0;
    const long table = kt::RuleTable(g.t.pod(0), g.t.eni(k + 1).ip4, 4, &priority);
    CHECK(priority == 200);
    CHECK(table >= 200);
    tables.insert(table);
    const json main = kt::Routes(g.t.pod(0), "main");
    bool at_metric = false;
    for (const auto& r : main)
      if (r.value("dev", "") == want[k] && r.value("metric", 0) == 200 + k) at_metric = true;
    CHECK(at_metric);
  }
  CHECK(tables.size() == 8);
  json del_config = kt::AsRuntimeWouldForDel(g.config, add.json);
  kt::PluginCall check = g.Call("CHECK", cid);
  check.stdin_text = del_config.dump();
  kt::PluginResult checked = kt::RunPlugin(check);
  INFO("CHECK: " << kt::Describe(checked));
  CHECK(checked.exit == 0);
  // One member's interface gone: CHECK names it.
  kt::ShOk("ip -n " + g.t.pod(0) + " link set net5 down");
  kt::PluginResult broken = kt::RunPlugin(check);
  kt::CheckError(broken, 105, {"net5"});
  kt::ShOk("ip -n " + g.t.pod(0) + " link set net5 up");

  kt::PluginCall del = g.Call("DEL", cid);
  del.stdin_text = del_config.dump();
  kt::PluginResult deleted = kt::RunPlugin(del);
  INFO("DEL: " << kt::Describe(deleted));
  REQUIRE(deleted.exit == 0);
  g.CheckHome(8, cid);
  CHECK(kt::SettledDiff(pod_before, g.t.pod(0)).empty());
  REQUIRE(kt::RunPlugin(del).exit == 0);  // and again
}

TEST_CASE(
    "a group's ADD failing at any of its members' fault points, or killed there, leaves nothing once DEL "
    "ran",
    "[sweep]") {
  if (!base::fault::kEnabled)
    KT_SKIP("fault hooks: build with -DERDMA_CNI_FAULT_HOOKS=ON (any non-Release test build)");
  Group g(3);
  g.Pool(1, 3, 3);
  const std::string pod_before = kt::StableSnapshot(g.t.pod(0));
  const std::string trace = g.t.tmp() + "/trace";
  const std::string probe = g.t.ContainerId("probe");
  REQUIRE(g.Run("ADD", probe, 0, {"ERDMA_CNI_FAULT_TRACE=" + trace}).exit == 0);
  REQUIRE(g.Run("DEL", probe).exit == 0);
  const std::vector<std::string> points = Lines(trace);
  CHECK(std::count_if(points.begin(), points.end(),
                      [](const std::string& p) { return p.starts_with("before:member#"); }) == 3);
  REQUIRE(points.size() >= 30);
  const std::vector<std::string> run = kt::SweepSample(points, "group of 3 ADD");
  int n = 0;
  for (const std::string& point : run) {
    for (const char* action : {"fail", "kill"}) {
      INFO("ADD " << action << " at " << point);
      const std::string cid = g.t.ContainerId("f" + std::to_string(n++));
      kt::PluginResult add =
          g.Run("ADD", cid, 0, {"ERDMA_CNI_FAULT=" + point, std::string("ERDMA_CNI_FAULT_ACTION=") + action});
      INFO("faulted ADD: " << kt::Describe(add));
      CHECK(add.exit != 0);
      if (std::string(action) == "fail" && add.exit == 1) {
        // All or nothing: a failed ADD took every member back.
        CHECK(kt::SettledDiff(pod_before, g.t.pod(0)).empty());
      }
      kt::PluginResult del = g.Run("DEL", cid);
      INFO("DEL: " << kt::Describe(del));
      CHECK(del.exit == 0);
      g.CheckHome(3, cid);
      CHECK(kt::SettledDiff(pod_before, g.t.pod(0)).empty());
    }
  }
  std::cout << "fault points: group of 3, ADD " << points.size() << " points, " << 2 * run.size()
            << " runs (fail, kill)\n";
}

TEST_CASE("eight devices: ADD failing at any of its fault points rolls back all eight", "[sweep]") {
  if (!base::fault::kEnabled)
    KT_SKIP("fault hooks: build with -DERDMA_CNI_FAULT_HOOKS=ON (any non-Release test build)");
  Group g(8);
  g.Pool(1, 8, 8);
  const std::string pod_before = kt::StableSnapshot(g.t.pod(0));
  const std::string node_before = kt::StableSnapshot(g.t.node());
  const std::string trace = g.t.tmp() + "/trace";
  const std::string probe = g.t.ContainerId("probe");
  REQUIRE(g.Run("ADD", probe, 0, {"ERDMA_CNI_FAULT_TRACE=" + trace}).exit == 0);
  REQUIRE(g.Run("DEL", probe).exit == 0);
  const std::vector<std::string> points = Lines(trace);
  REQUIRE(points.size() >= 80);
  const std::vector<std::string> run = kt::SweepSample(points, "group of 8 ADD");
  int n = 0;
  for (const std::string& point : run) {
    INFO("ADD failing at " << point);
    const std::string cid = g.t.ContainerId("e" + std::to_string(n++));
    kt::PluginResult add = g.Run("ADD", cid, 0, {"ERDMA_CNI_FAULT=" + point});
    INFO("ADD: " << kt::Describe(add));
    CHECK(add.exit == 1);
    CHECK(add.json.value("msg", "").find("injected fault at " + point) != std::string::npos);
    CHECK(kt::SettledDiff(pod_before, g.t.pod(0)).empty());
    CHECK(kt::SettledDiff(node_before, g.t.node()).empty());
    g.CheckHome(8, cid);
  }
  std::cout << "fault points: group of 8, ADD " << points.size() << " points, " << run.size()
            << " failed, all rolled back\n";
}

TEST_CASE(
    "a pool takes the free devices, names what it took and why in the group's state, and a pool too small is "
    "code 11 with nothing changed") {
  Group g(3, 3);
  // Pod 0 holds eth1 alone (move mode by name).
  json by_name = g.config;
  by_name["device"] = {{"name", g.t.eni(1).name}};
  const std::string a = g.t.ContainerId("a");
  REQUIRE(kt::RunPlugin(kt::Call(g.t, "ADD", a, "net1", by_name, 0)).exit == 0);

  g.Pool(1, 3, 2);
  const std::string b = g.t.ContainerId("b");
  kt::PluginResult add_b = g.Run("ADD", b, 1);
  INFO("ADD b: " << kt::Describe(add_b));
  REQUIRE(add_b.exit == 0);
  CHECK(Interfaces(add_b.json) == std::vector<std::string>{"net1", "net2"});
  CHECK(kt::Addresses(g.t.pod(1), "net1") == std::vector<std::string>{g.t.eni(2).ip4 + "/24"});
  CHECK(kt::Addresses(g.t.pod(1), "net2") == std::vector<std::string>{g.t.eni(3).ip4 + "/24"});
  // The group's state: a member step per device, with why.
  bool group_file = false;
  for (const std::string& f : kt::StateFiles(g.t.DataDir() + "/erdma-test")) {
    if (!f.ends_with("%group")) continue;
    group_file = true;
    std::ifstream in(g.t.DataDir() + "/erdma-test/" + f);
    const json st = json::parse(in);
    CHECK(st.value("group", false));
    REQUIRE(st["steps"].size() == 2);
    CHECK(st["steps"][0]["op"] == "member");
    CHECK(st["steps"][0]["device"] == g.t.eni(2).name);
    CHECK(st["steps"][0]["why"].get<std::string>().find("GPUs are not known") != std::string::npos);
  }
  CHECK(group_file);
  // diag shows the choice and the reason, and both interfaces as the group's.
  kt::ShResult diag = kt::Sh("ip netns exec " + g.t.node() + " " + kt::PluginBinary() +
                             " diag --json --netns " + g.t.PodPath(1) + " --data-dir " + g.t.DataDir());
  INFO("diag: " << diag.out << diag.err);
  const json report = json::parse(diag.out, nullptr, false);
  REQUIRE(report.is_object());
  int members = 0;
  bool group_seen = false;
  for (const auto& st : report["states"]) {
    if (st.contains("memberOf") && st["memberOf"] == "net1") ++members;
    if (!st.contains("group")) continue;
    group_seen = true;
    REQUIRE(st["group"].size() == 2);
    CHECK(st["group"][1]["podIfName"] == "net2");
    CHECK(st["group"][1]["device"] == g.t.eni(3).name);
    CHECK(st["group"][1]["why"].get<std::string>().find("GPUs are not known") != std::string::npos);
    CHECK(st["problems"].empty());
  }
  CHECK(group_seen);
  CHECK(members == 2);
  kt::ShResult rendered = kt::Sh("ip netns exec " + g.t.node() + " " + kt::PluginBinary() + " diag --netns " +
                                 g.t.PodPath(1) + " --data-dir " + g.t.DataDir());
  INFO("diag text: " << rendered.out);
  CHECK(rendered.out.find("  net2: " + g.t.eni(3).name + " (") != std::string::npos);
  std::ifstream log(g.t.LogFile());
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  // eth1 is in pod 0: not on the node, not a candidate. Each candidate with why.
  const std::string why = " (by name: the pod's GPUs are not known)";
  CHECK(text.find("device.pool: free, nearest the pod's GPUs first: " + g.t.eni(2).name + why + ", " +
                  g.t.eni(3).name + why + "\n") != std::string::npos);

  // Nothing free is left for a third pod.
  const std::string node_before = kt::StableSnapshot(g.t.node());
  const std::string c = g.t.ContainerId("c");
  kt::PluginResult add_c = g.Run("ADD", c, 2);
  INFO("ADD c: " << kt::Describe(add_c));
  kt::CheckError(add_c, 11, {"device.pool", "free device"});
  CHECK(kt::SettledDiff(node_before, g.t.node()).empty());
  CHECK(kt::ClaimsFor(g.t.DataDir(), c).empty());

  REQUIRE(g.Run("DEL", b, 1).exit == 0);
  REQUIRE(kt::RunPlugin(kt::Call(g.t, "DEL", a, "net1", by_name, 0)).exit == 0);
  g.CheckHome(3, b);
}

TEST_CASE(
    "GC keeps a valid group's members and removes an invalid group with all of them, each member's IPAM "
    "lease released as the member took it") {
  Group g(2);
  g.Pool(1, 2, "all");
  g.config["cniVersion"] = "1.1.0";
  g.config["addresses"] = "ipam";
  g.config["ipam"] = {{"type", "host-local"},       {"subnet", kt::kSubnet4},
                      {"rangeStart", "10.9.0.100"}, {"rangeEnd", "10.9.0.120"},
                      {"gateway", kt::kGateway4},   {"dataDir", g.t.tmp() + "/ipam"}};
  const std::string cid = g.t.ContainerId("gc");
  REQUIRE(g.Run("ADD", cid).exit == 0);
  // host-local keeps "<containerID>\n<ifname>" in each lease: each member's is its own interface.
  const std::string leases = g.t.tmp() + "/ipam/erdma-test/";
  std::ifstream first(leases + "10.9.0.100"), second(leases + "10.9.0.101");
  const std::string a((std::istreambuf_iterator<char>(first)), std::istreambuf_iterator<char>());
  const std::string b((std::istreambuf_iterator<char>(second)), std::istreambuf_iterator<char>());
  CHECK(a == cid + "\r\nnet1");
  CHECK(b == cid + "\r\nnet2");
  json gc = g.config;
  gc.erase("device");
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", cid}, {"ifname", "net1"}}});
  REQUIRE(kt::RunPlugin(kt::Gc(g.t, gc)).exit == 0);
  CHECK(kt::LinkExists(g.t.pod(0), "net1"));
  CHECK(kt::LinkExists(g.t.pod(0), "net2"));
  gc["cni.dev/valid-attachments"] = json::array();
  REQUIRE(kt::RunPlugin(kt::Gc(g.t, gc)).exit == 0);
  CHECK_FALSE(kt::LinkExists(g.t.pod(0), "net1"));
  CHECK_FALSE(kt::LinkExists(g.t.pod(0), "net2"));
  g.CheckHome(2, cid);
  CHECK_FALSE(kt::FileExists(leases + "10.9.0.100"));
  CHECK_FALSE(kt::FileExists(leases + "10.9.0.101"));
}

TEST_CASE(
    "device.resource with count \"all\": chained after Terway, every device the kubelet gave the pod, named "
    "from ifName, fewer than count is code 100") {
  const std::string missing = kubelet_test::MissingPython();
  if (!missing.empty()) KT_SKIP("the fake kubelet needs " + missing);
  Group g(3, 2, true);
  const std::string pods = g.t.tmp() + "/pods.json";
  std::ofstream(pods) << R"({"pods": [
{"namespace": "ml", "name": "rails", "containers": [
  {"name": "a", "devices": [{"resource": "example.com/eni", "ids": ["eth2", "eth3"], "numa": [1]}]},
  {"name": "b", "devices": [{"resource": "example.com/eni", "ids": ["eth2"], "numa": [1]}]}]}]})";
  kubelet_test::FakeKubelet kubelet("get", pods);
  const std::string node_file = g.t.tmp() + "/node.json";
  kt::WriteNodeFile(node_file, json{{"dataDirs", {"/tmp/"}},
                                    {"logFiles", {"/tmp/"}},
                                    {"allowNodeDevices", {"eth1", "eth2", "eth3"}},
                                    {"podResourcesSocket", kubelet.socket()}}
                                   .dump());
  const std::string cid = g.t.ContainerId("rails");
  g.config["device"] = {{"resource", "example.com/eni"}, {"count", "all"}};
  g.config["ifName"] = "erdma0";
  g.config["prevResult"] = kt::TerwayPrevResult("1.0.0", cid);
  kt::PluginCall add = kt::Call(g.t, "ADD", cid, "eth0", g.config, 0);
  add.cni_args = "K8S_POD_NAMESPACE=ml;K8S_POD_NAME=rails";
  add.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
  kt::PluginResult r = kt::RunPlugin(add);
  INFO("ADD: " << kt::Describe(r));
  REQUIRE(r.exit == 0);
  CHECK(Interfaces(r.json) == std::vector<std::string>{"eth0", "erdma0", "erdma1"});
  CHECK(kt::Addresses(g.t.pod(0), "erdma0") == std::vector<std::string>{g.t.eni(2).ip4 + "/24"});
  CHECK(kt::Addresses(g.t.pod(0), "erdma1") == std::vector<std::string>{g.t.eni(3).ip4 + "/24"});
  CHECK(kt::LinkExists(g.t.node(), g.t.eni(1).name));
  CHECK(kubelet.Calls() == std::vector<std::string>{"Get ml/rails -> OK"});

  kt::PluginCall del = add;
  del.command = "DEL";
  del.stdin_text = kt::AsRuntimeWouldForDel(g.config, r.json).dump();
  REQUIRE(kt::RunPlugin(del).exit == 0);
  CHECK(kubelet.Calls().size() == 1);
  g.CheckHome(3, cid);

  g.config["device"]["count"] = 3;
  g.config.erase("prevResult");
  const std::string node_before = kt::StableSnapshot(g.t.node());
  kt::PluginCall three = kt::Call(g.t, "ADD", cid, "net1", g.config, 1);
  three.cni_args = add.cni_args;
  three.extra_env = add.extra_env;
  kt::PluginResult few = kt::RunPlugin(three);
  INFO("count 3: " << kt::Describe(few));
  kt::CheckError(few, 100, {"device.count asks for 3", "eth2, eth3"});
  CHECK(kt::SettledDiff(node_before, g.t.node()).empty());
}

TEST_CASE("DEL of a group whose file is corrupt finds its members by memberOf and sets the file aside") {
  Group g(2);
  g.Pool(1, 2, 2);
  const std::string cid = g.t.ContainerId("corrupt");
  const std::string pod_before = kt::StableSnapshot(g.t.pod(0));
  REQUIRE(g.Run("ADD", cid).exit == 0);
  const std::string file = g.t.DataDir() + "/erdma-test/@" + cid + "@net1%group";
  REQUIRE(kt::FileExists(file));
  std::ofstream(file, std::ios::trunc) << "{\"format\": 1, \"stat";
  kt::PluginResult del = g.Run("DEL", cid);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  for (int i = 1; i <= 2; ++i) CHECK(kt::LinkExists(g.t.node(), g.t.eni(i).name));
  CHECK(kt::SettledDiff(pod_before, g.t.pod(0)).empty());
  CHECK(kt::StateFiles(g.t.DataDir() + "/erdma-test") ==
        std::vector<std::string>{"@" + cid + "@net1%group.unreadable"});
  CHECK(kt::ClaimsFor(g.t.DataDir(), cid).empty());
  CHECK(g.Run("DEL", cid).exit == 0);
}

TEST_CASE("ADD of an attachment whose group exists is refused with code 11, whatever device it names") {
  Group g(3, 1, true);
  g.Pool(1, 2, 2);
  g.config["device"]["required"] = true;  // chained: no opt-in annotation needed
  const std::string cid = g.t.ContainerId("again");
  g.config["ifName"] = "erdma0";
  g.config["prevResult"] = kt::TerwayPrevResult("1.0.0", cid);
  kt::PluginResult add = kt::RunPlugin(kt::Call(g.t, "ADD", cid, "eth0", g.config, 0));
  INFO("group ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  // The same attachment (container, CNI_IFNAME) again, one device by name, another pod-side name.
  json one = g.config;
  one["device"] = {{"name", g.t.eni(3).name}};
  one["ifName"] = "rdma9";
  const std::string node_before = kt::StableSnapshot(g.t.node());
  kt::PluginResult again = kt::RunPlugin(kt::Call(g.t, "ADD", cid, "eth0", one, 0));
  INFO("ADD again: " << kt::Describe(again));
  kt::CheckError(again, 11, {"already exists", "%group"});
  CHECK(kt::SettledDiff(node_before, g.t.node()).empty());
  kt::PluginCall del = kt::Call(g.t, "DEL", cid, "eth0", kt::AsRuntimeWouldForDel(g.config, add.json), 0);
  REQUIRE(kt::RunPlugin(del).exit == 0);
  g.CheckHome(3, cid);
}

}  // namespace test_kernel_plugin_group_test

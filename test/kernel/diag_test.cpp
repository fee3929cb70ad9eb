// `erdma-cni diag` against a real attachment: what it reports about the pod
// netns (netdevs, SMC sysctls, memlock of the pod's processes) and how it
// compares erdma-cni's state with the kernel. This kernel has no RDMA or SMC
// netlink; diag must say so as a problem, not fail. The VM scenario
// `diag.sh` shows the RDMA side (ports, GIDs, pairing).
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_diag_test {

using nlohmann::json;

namespace {

json Diag(const kt::Topology& t, const std::string& netns, int* exit_code) {
  kt::ShResult r = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --json --netns " +
                          netns + " --data-dir " + t.DataDir());
  *exit_code = r.exit;
  INFO("diag stdout: " << r.out << "\nstderr: " << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

}  // namespace

TEST_CASE("diag reports the pod's interface, its sysctls, its processes' memlock and a consistent state") {
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("diag");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  // A process living in the pod, as the pause container would.
  // `ip netns exec` and sh exec in place: $! is the sleeper's pid.
  // NCCL_IB_HCA as the NRI agent would set it (docs/nri.md).
  const std::string pid = kt::ShOk("ip netns exec " + t.pod() +
                                   " sh -c 'ulimit -l 64; export NCCL_IB_HCA==erdma_0:1 "
                                   "NCCL_TOPO_FILE=/run/erdma-cni/nccl-topo.xml; exec sleep 30' "
                                   ">/dev/null 2>&1 & echo $!");
  // A process that names itself with bytes that are no UTF-8 and a terminal escape (only a process may
  // rename itself: the shell does, then waits for its sleep).
  std::string odd = kt::ShOk("ip netns exec " + t.pod() +
                             " sh -c \"printf 'bad\\377\\033[31m' > /proc/self/comm; sleep 30\" "
                             ">/dev/null 2>&1 & echo $!");
  odd.erase(odd.find_last_not_of('\n') + 1);
  kt::Sh("sleep 0.3");

  int rc = -1;
  json d = Diag(t, t.PodPath(), &rc);
  CHECK(d.value("netns", "") == t.PodPath());
  bool found = false;
  for (const auto& n : d["netdevs"])
    if (n.value("name", "") == "net1") {
      found = true;
      CHECK(n.value("mac", "") == eni.mac);
      CHECK(n.value("up", false));
    }
  CHECK(found);
  // No RDMA on this kernel: reported, and counted as a problem.
  CHECK(d["rdma"].contains("error"));
  CHECK(rc == 1);
  CHECK(d["smc"]["sysctls"].contains("net.ipv6.conf.all.disable_ipv6"));
  bool sleeper = false;
  for (const auto& p : d["memlock"]["processes"])
    if (p.value("comm", "") == "sleep" && p.value("pid", 0) == std::stoi(pid)) {
      sleeper = true;
      CHECK(p.value("soft", "") == "65536");
      CHECK(p.value("ncclIbHca", "") == "=erdma_0:1");
      CHECK(p.value("ncclTopoFile", "") == "/run/erdma-cni/nccl-topo.xml");
      CHECK(p["infiniband"] == json::array());  // the node's /dev, which has no /dev/infiniband here
    }
  CHECK(sleeper);
  // Its name reaches --json escaped (valid UTF-8, no escape byte), as the text shows it.
  bool named = false;
  for (const auto& p : d["memlock"]["processes"]) named = named || p.value("comm", "") == "bad\\xff\\x1b[31m";
  CHECK(named);
  CHECK(d["memlock"].value("hint", "").find("LimitMEMLOCK=infinity") != std::string::npos);
  CHECK(d["memlock"].value("hint", "").find("erdma-cni-nri") != std::string::npos);
  REQUIRE(d["states"].size() == 1);
  CHECK(d["states"][0].value("containerID", "") == cid);
  CHECK(d["states"][0]["problems"].empty());

  // --container finds the same netns through erdma-cni's state.
  kt::ShResult by_id = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() +
                              " diag --json --container " + cid + " --data-dir " + t.DataDir());
  json by_id_json = json::parse(by_id.out, nullptr, false);
  REQUIRE(by_id_json.is_object());
  CHECK(by_id_json.value("netns", "") == t.PodPath());
  CHECK(by_id_json["netdevs"].dump().find("\"net1\"") != std::string::npos);
  kt::ShResult unknown =
      kt::Sh(kt::PluginBinary() + " diag --container no-such-pod --data-dir " + t.DataDir());
  CHECK(unknown.exit == 2);
  CHECK(unknown.err.find("no erdma-cni state of container no-such-pod") != std::string::npos);
  CHECK(kt::Sh(kt::PluginBinary() + " diag --container " + cid + " --netns " + t.PodPath()).exit == 2);

  // Behind erdma-cni's back the interface goes: diag names the mismatch.
  kt::ShOk("ip -n " + t.pod() + " link set net1 netns " + t.node() + " name " + eni.name);
  json after = Diag(t, t.PodPath(), &rc);
  REQUIRE(after["states"].size() == 1);
  CHECK(after["states"][0]["problems"].dump().find("net1 is missing from the netns") != std::string::npos);
  kt::Sh("kill " + pid + " " + odd);

  // The human form says the same.
  kt::ShResult text = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --netns " +
                             t.PodPath() + " --data-dir " + t.DataDir());
  CHECK(text.out.find("!! ") != std::string::npos);
  CHECK(text.out.find("net1 is missing") != std::string::npos);
  CHECK(kt::Sh(kt::PluginBinary() + " diag --bogus").exit == 2);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
}

namespace {

// erdma-cni run by hand on the node, as an admin does: no CNI_* variables.
kt::ShResult Admin(const kt::Topology& t, const std::string& args, const std::string& env = "") {
  return kt::Sh("ip netns exec " + t.node() + " env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin " + env + " " +
                kt::PluginBinary() + " " + args);
}

json DiagJson(const kt::Topology& t, const std::string& args, const std::string& env = "") {
  kt::ShResult r = Admin(t, "diag --json " + args, env);
  INFO("diag " << args << " exit " << r.exit << "\nstdout: " << r.out << "\nstderr: " << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

}  // namespace

TEST_CASE(
    "erdma-cni --help and -h and help print what it is with its version and CNI versions and commands") {
  kt::Topology t;
  for (const std::string arg : {"--help", "-h", "help"}) {
    INFO("erdma-cni " << arg);
    kt::ShResult r = Admin(t, arg);
    CHECK(r.exit == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(json::parse(r.out, nullptr, false).is_object());
    CHECK(r.out.find("erdma-cni " ERDMA_CNI_VERSION) != std::string::npos);
    CHECK(r.out.find("CNI versions: 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0") != std::string::npos);
    CHECK(r.out.find("  diag ") != std::string::npos);
    CHECK(r.out.find("  clear ") != std::string::npos);
    CHECK(r.out.find("/usr/share/doc/erdma-cni") != std::string::npos);
  }
  // A runtime sets CNI_COMMAND and passes no arguments: with CNI_COMMAND set
  // erdma-cni is the plugin, whatever its arguments.
  kt::ShResult cni = Admin(t, "--help </dev/null", "CNI_COMMAND=VERSION");
  CHECK(cni.exit == 0);
  json version = json::parse(cni.out, nullptr, false);
  REQUIRE(version.is_object());
  CHECK(version["supportedVersions"].size() == 5);
}

TEST_CASE("erdma-cni typed at a terminal or with an unknown command points to --help and reads nothing") {
  kt::Topology t;
  // stdin a terminal (script(1) gives it a pty) and no CNI_COMMAND: a person,
  // not a runtime. Bounded by timeout(1): reading the terminal would hang.
  kt::ShResult tty =
      kt::Sh("timeout 20 script -qec 'env -u CNI_COMMAND " + kt::PluginBinary() + "' /dev/null </dev/null");
  INFO("at a terminal: exit " << tty.exit << "\n" << tty.out << tty.err);
  CHECK(tty.exit == 2);
  CHECK(tty.out.find("`erdma-cni --help` says how to run it") != std::string::npos);
  CHECK(tty.out.find("\"code\"") == std::string::npos);
  kt::ShResult unknown = Admin(t, "bogus </dev/null");
  CHECK(unknown.exit == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err.find("erdma-cni: unknown command bogus; a container runtime runs this CNI plugin") !=
        std::string::npos);
  // A runtime's call is untouched: CNI_COMMAND set, stdin not a terminal.
  kt::ShResult version = Admin(t, "</dev/null", "CNI_COMMAND=VERSION");
  CHECK(version.exit == 0);
  CHECK(json::parse(version.out, nullptr, false).is_object());
}

TEST_CASE("diag flags a node conflist entry that names one device for every pod or asks a mute kubelet") {
  kt::Topology t;
  const std::string dir = t.tmp() + "/net.d";
  kt::ShOk("mkdir -m 0755 " + dir);
  const json primary = {{"type", "ptp"}, {"ipam", {{"type", "host-local"}}}};
  auto conflist = [&](const json& entry) {
    return json{{"cniVersion", "1.0.0"}, {"name", "node"}, {"plugins", {primary, entry}}}.dump();
  };
  const std::string node_file = t.tmp() + "/node.json";
  kt::WriteNodeFile(node_file, json{{"podResourcesSocket", t.tmp() + "/no-kubelet.sock"}}.dump());
  const std::string env = "ERDMA_CNI_NODE_CONFIG=" + node_file;
  const std::string args = "--data-dir " + t.DataDir() + " --cni-conf-dir " + dir;

  kt::WriteNodeFile(dir + "/10-node.conflist", conflist({{"type", "erdma-cni"}, {"mode", "none"}}));
  json fine = DiagJson(t, args, env);
  REQUIRE(fine["nodeEntries"].size() == 1);
  CHECK(fine["nodeEntries"][0]["problems"].empty());

  kt::WriteNodeFile(dir + "/10-node.conflist",
                    conflist({{"type", "erdma-cni"}, {"device", {{"name", "eth1"}}}}));
  json named = DiagJson(t, args, env);
  REQUIRE(named["nodeEntries"].size() == 1);
  CHECK_THAT(named["nodeEntries"][0]["problems"].dump(),
             Catch::Contains("device.name names one node device for every pod"));
  CHECK_THAT(named["problems"].dump(),
             Catch::Contains(dir + "/10-node.conflist: erdma-cni entry: device.name"));

  kt::WriteNodeFile(dir + "/10-node.conflist",
                    conflist({{"type", "erdma-cni"}, {"device", {{"resource", "aliyun/erdma"}}}}));
  json mute = DiagJson(t, args, env);
  REQUIRE(mute["nodeEntries"].size() == 1);
  CHECK_THAT(mute["nodeEntries"][0].value("kubelet", ""), Catch::Contains("no-kubelet.sock"));
  CHECK_THAT(mute["problems"].dump(), Catch::Contains("which does not answer") && Catch::Contains(node_file));
  kt::ShResult text = Admin(t, "diag " + args, env);
  CHECK(text.exit == 1);
  CHECK_THAT(text.out, Catch::Contains("== erdma-cni in the node's conflists") && Catch::Contains("!! "));

  // A plugin that comes first is not chained: not judged.
  kt::WriteNodeFile(dir + "/10-node.conflist",
                    json{{"cniVersion", "1.0.0"},
                         {"name", "nad"},
                         {"plugins", {{{"type", "erdma-cni"}, {"device", {{"name", "eth1"}}}}}}}
                        .dump());
  CHECK(DiagJson(t, args, env)["nodeEntries"].empty());
}

TEST_CASE("diag names an option it does not know and exits 2") {
  kt::Topology t;
  kt::ShResult r = Admin(t, "diag --bogus");
  CHECK(r.exit == 2);
  CHECK(r.err.find("diag: unknown option --bogus; usage: erdma-cni diag") != std::string::npos);
  kt::ShResult missing = Admin(t, "diag --netns");
  CHECK(missing.exit == 2);
  CHECK(missing.err.find("diag: --netns needs a value") != std::string::npos);
}

TEST_CASE("diag searches every dataDir the node file lists and --container finds a state in the second") {
  kt::Topology t;
  const std::string node_file = t.tmp() + "/node.json";
  kt::WriteNodeFile(node_file, json{{"dataDirs", {t.tmp() + "/first", t.DataDir()}},
                                    {"logFiles", {"/tmp/"}},
                                    {"allowNodeDevices", {"eth1"}}}
                                   .dump());
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("second");
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
  REQUIRE(kt::RunPlugin(add).exit == 0);

  const std::string env = "ERDMA_CNI_NODE_CONFIG=" + node_file;
  json by_id = DiagJson(t, "--container " + cid, env);
  CHECK(by_id.value("netns", "") == t.PodPath());
  json all = DiagJson(t, "", env);
  REQUIRE(all["states"].size() == 1);
  CHECK(all["states"][0].value("containerID", "") == cid);
  CHECK(all["states"][0].value("dataDir", "") == t.DataDir());
  REQUIRE(all["holders"].size() == 1);
  CHECK(all["holders"][0].value("containerID", "") == cid);
  CHECK(all["dataDirs"].dump().find(t.tmp() + "/first") != std::string::npos);
  // --data-dir still narrows it to one.
  CHECK(DiagJson(t, "--data-dir " + t.tmp() + "/first", env)["states"].empty());
  add.command = "DEL";
  REQUIRE(kt::RunPlugin(add).exit == 0);
}

TEST_CASE(
    "diag --container and clear find an attachment below a dataDirs entry ending in / through its record") {
  kt::Topology t;
  const std::string node_file = t.tmp() + "/node.json";
  const std::string records = t.tmp() + "/records";
  kt::WriteNodeFile(node_file, json{{"dataDirs", {"/tmp/"}},
                                    {"logFiles", {"/tmp/"}},
                                    {"allowNodeDevices", {"eth1"}},
                                    {"attachmentsDir", records}}
                                   .dump());
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string cid = t.ContainerId("prefix");
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
  REQUIRE(kt::RunPlugin(add).exit == 0);
  REQUIRE(kt::FileExists(records + "/@" + cid + "@net1"));

  // No dataDir of the node file is searchable by its path: the record names it.
  const std::string env = "ERDMA_CNI_NODE_CONFIG=" + node_file;
  CHECK(DiagJson(t, "--container " + cid, env).value("netns", "") == t.PodPath());
  kt::ShResult cleared = Admin(t, "clear --container " + cid, env);
  INFO("clear exit " << cleared.exit << "\nstdout: " << cleared.out << "\nstderr: " << cleared.err);
  CHECK(cleared.exit == 0);
  CHECK_FALSE(kt::FileExists(records + "/@" + cid + "@net1"));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir()).empty());
}

TEST_CASE("diag names a chained group after its first rail and not after the CNI_IFNAME it is keyed by") {
  kt::Topology t({.enis = 2, .pods = 1, .primary = true});
  const std::string cid = t.ContainerId("rails");
  json config = kt::PluginConfig({.device = "",
                                  .data_dir = t.DataDir(),
                                  .log_file = t.LogFile(),
                                  .addresses = "inherit",
                                  .prev_result = kt::TerwayPrevResult("1.0.0", cid)});
  // required: chained, a pool otherwise attaches only to a pod that asked by annotation.
  config["device"] = {
      {"pool", {{"names", {t.eni(1).name, t.eni(2).name}}}}, {"count", "all"}, {"required", true}};
  config["ifName"] = "erdma0";
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "eth0", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);

  json d = DiagJson(t, "--data-dir " + t.DataDir());
  int members = 0;
  for (const auto& s : d["states"]) {
    if (s.contains("memberOf")) {
      ++members;
      CHECK(s.value("groupName", "") == "erdma0");
      CHECK(s.value("memberOf", "") == "eth0");
    }
    if (s.contains("group")) CHECK(s.value("groupName", "") == "erdma0");
  }
  CHECK(members == 2);
  kt::ShResult text = Admin(t, "diag --data-dir " + t.DataDir());
  CHECK(text.out.find("interface erdma1 of the group erdma0 (CNI_IFNAME eth0)") != std::string::npos);
  CHECK(text.out.find("of the group eth0") == std::string::npos);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", kt::AsRuntimeWouldForDel(config, add.json))).exit ==
          0);
}

TEST_CASE("diag reports the states of a network whose name starts with a dot") {
  kt::Topology t;
  json config = kt::PluginConfig({.name = ".hidden", .data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("dot");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  json d = DiagJson(t, "--data-dir " + t.DataDir());
  REQUIRE(d["states"].size() == 1);
  CHECK(d["states"][0].value("network", "") == ".hidden");
  CHECK(d["states"][0].value("containerID", "") == cid);
  CHECK(DiagJson(t, "--container " + cid + " --data-dir " + t.DataDir()).value("netns", "") == t.PodPath());
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
}

TEST_CASE("diag says whether the runtime offers NRI and whether the agent runs") {
  kt::TempDir d;
  auto diag = [&](const std::string& socket) {
    kt::ShResult r =
        kt::Sh(kt::PluginBinary() + " diag --json --data-dir " + d.path() + " --nri-socket " + socket);
    json j = json::parse(r.out, nullptr, false);
    INFO("diag stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(j.is_object());
    return j["nri"];
  };
  // No socket: absent, with the containerd line that turns NRI on.
  json absent = diag(d.path() + "/nri.sock");
  CHECK_FALSE(absent.value("offered", true));
  CHECK_THAT(absent.value("fix", ""), Catch::Contains("io.containerd.nri.v1.nri"));
  // A runtime's socket, and the agent running (waiting on a socket that does not answer).
  kt::ShOk(
      "python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
      "s.listen(); time.sleep(30)' " +
      d.path() + "/nri.sock >/dev/null 2>&1 & echo $! > " + d.path() + "/listener.pid");
  const std::string agent = kt::ShOk(std::string(ERDMA_CNI_NRI_BIN) + " --socket " + d.path() +
                                     "/none.sock >/dev/null 2>&1 & echo $!");
  kt::Sh("for i in $(seq 50); do [ -S " + d.path() + "/nri.sock ] && break; sleep 0.1; done");
  json offered = diag(d.path() + "/nri.sock");
  kt::Sh("kill " + agent + " $(cat " + d.path() + "/listener.pid)");
  CHECK(offered.value("offered", false));
  CHECK_FALSE(offered.contains("fix"));
  CHECK(offered["agents"].dump().find(std::to_string(std::stoi(agent))) != std::string::npos);
}

}  // namespace test_kernel_diag_test

// The IPAM plugin is a program erdma-cni runs as root and waits for: it gets
// a time limit (ipamTimeoutMs) enforced on its whole process group, its
// output is bounded in size and depth, and a plugin that cannot be found
// leaves no attachment behind that DEL could never finish. Each case ends
// with the device free: another pod's ADD takes it.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "base/fault.h"
#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_ipam_limits_test {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

constexpr const char* kVersionAnswer =
    R"({"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]})";

// Writes an executable IPAM plugin `name` into <tmp>/bin: `add` is the shell
// text of its ADD; DEL and everything else succeed quietly.
std::string FakePlugin(const kt::Topology& t, const std::string& name, const std::string& add) {
  std::string dir = t.tmp() + "/bin";
  fs::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\ncase \"$CNI_COMMAND\" in\n"
                      << "ADD) " << add << " ;;\n"
                      << "VERSION) echo '" << kVersionAnswer << "' ;;\n"
                      << "*) : ;;\nesac\n";
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  return dir;
}

json IpamConfig(const kt::Topology& t, const json& ipam, const json& extra = json::object()) {
  return kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = ipam, .extra = extra});
}

kt::PluginCall CallWithPath(const kt::Topology& t, const std::string& command, const std::string& cid,
                            const json& config, const std::string& bin, int pod = 0) {
  kt::PluginCall c = kt::Call(t, command, cid, "net1", config, pod);
  c.cni_path = bin + ":/usr/lib/cni";
  c.timeout = std::chrono::seconds(20);
  return c;
}

// Whether a process is gone (or a zombie nobody reaped yet: it runs no more).
bool Dead(const std::string& pid_file) {
  std::ifstream f(pid_file);
  std::string pid;
  if (!(f >> pid)) return false;
  for (int i = 0; i < 50; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') return true;
    ::usleep(100000);
  }
  return false;
}

// The device is free: a second pod's ADD with a working IPAM plugin takes it.
void CheckDeviceFree(const kt::Topology& t) {
  const json ipam = {
      {"type", "static"},
      {"addresses", json::array({{{"address", "10.9.0.150/24"}, {"gateway", kt::kGateway4}}})}};
  const std::string next = t.ContainerId("next");
  json config = IpamConfig(t, ipam);
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", next, "net1", config, 1));
  INFO("the next pod's ADD: " << kt::Describe(add));
  CHECK(add.exit == 0);
  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", next, "net1", kt::AsRuntimeWouldForDel(config, add.json), 1));
  INFO("its DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
}

}  // namespace

TEST_CASE(
    "an IPAM plugin missing from CNI_PATH fails ADD with code 104 and then DEL succeeds and the device is "
    "free") {
  kt::Topology t({.pods = 2});
  const json config = IpamConfig(t, {{"type", "erdma-absent-ipam"}});
  const std::string cid = t.ContainerId("absent");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  kt::CheckError(add, 104, {"erdma-absent-ipam"});
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CheckDeviceFree(t);
}

TEST_CASE("DEL finishes an ADD that died after journaling a missing IPAM plugin and frees the device") {
  // The state an older erdma-cni left after its ADD failed this way: the
  // IPAM step journaled, IPAM ADD never answered, the device claimed.
  if (!base::fault::kEnabled)
    KT_SKIP("fault hooks: build with -DERDMA_CNI_FAULT_HOOKS=ON (any non-Release test build)");
  kt::Topology t({.pods = 2});
  const json config = IpamConfig(t, {{"type", "erdma-absent-ipam"}});
  const std::string cid = t.ContainerId("died");
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.extra_env = {"ERDMA_CNI_FAULT=before:ipam#1", "ERDMA_CNI_FAULT_ACTION=kill"};
  kt::PluginResult died = kt::RunPlugin(add);
  INFO("ADD: " << kt::Describe(died));
  REQUIRE(died.exit == -1);
  REQUIRE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  REQUIRE_FALSE(kt::ClaimsFor(t.DataDir(), cid).empty());

  for (int i = 0; i < 2; ++i) {  // the runtime's DEL, and containerd's second one
    kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
    INFO("DEL " << i << ": " << kt::Describe(del));
    CHECK(del.exit == 0);
  }
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CheckDeviceFree(t);
}

TEST_CASE(
    "an IPAM plugin that hangs is killed with its process group at ipamTimeoutMs and the device is free") {
  kt::Topology t({.pods = 2});
  const std::string pids = t.tmp() + "/pid";
  const std::string bin = FakePlugin(
      t, "hang-ipam", "echo $$ > " + pids + ".plugin; sleep 300 & echo $! > " + pids + ".child; wait");
  const json config = IpamConfig(t, {{"type", "hang-ipam"}}, {{"ipamTimeoutMs", 1000}});
  const std::string cid = t.ContainerId("hang");
  const std::string node_before = kt::StableSnapshot(t.node());

  const auto start = std::chrono::steady_clock::now();
  kt::PluginResult add = kt::RunPlugin(CallWithPath(t, "ADD", cid, config, bin));
  const auto took = std::chrono::steady_clock::now() - start;
  INFO("ADD: " << kt::Describe(add));
  CHECK_FALSE(add.timed_out);
  kt::CheckError(add, 104, {"ipamTimeoutMs"});
  CHECK(add.json.value("msg", "").find("hang-ipam") != std::string::npos);
  CHECK(add.json.value("msg", "").find("1000 ms") != std::string::npos);
  CHECK(took < std::chrono::seconds(8));
  CHECK(Dead(pids + ".plugin"));
  CHECK(Dead(pids + ".child"));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CheckDeviceFree(t);
}

TEST_CASE("an IPAM plugin that leaves a child holding its stdout does not hold ADD up") {
  kt::Topology t({.pods = 2});
  const std::string pids = t.tmp() + "/pid";
  const std::string bin =
      FakePlugin(t, "linger-ipam",
                 "sleep 300 & echo $! > " + pids +
                     ".child; echo '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.0.160/24\","
                     "\"gateway\":\"10.9.0.1\"}]}'");
  const json config = IpamConfig(t, {{"type", "linger-ipam"}});
  const std::string cid = t.ContainerId("linger");
  const std::string node_before = kt::StableSnapshot(t.node());

  const auto start = std::chrono::steady_clock::now();
  kt::PluginResult add = kt::RunPlugin(CallWithPath(t, "ADD", cid, config, bin));
  const auto took = std::chrono::steady_clock::now() - start;
  INFO("ADD: " << kt::Describe(add));
  REQUIRE_FALSE(add.timed_out);
  REQUIRE(add.exit == 0);
  CHECK(took < std::chrono::seconds(8));
  CHECK_FALSE(kt::FindIp(add.json, "10.9.0.160/24").is_null());
  CHECK(Dead(pids + ".child"));

  kt::PluginResult del =
      kt::RunPlugin(CallWithPath(t, "DEL", cid, kt::AsRuntimeWouldForDel(config, add.json), bin));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("IPAM output nested too deep or too large is refused with code 104 and nothing changes") {
  kt::Topology t({.pods = 2});
  const std::string deep = t.tmp() + "/deep.json";
  const std::string big = t.tmp() + "/big.json";
  {
    // A result that would attach, with a 100000-deep array where dns may be anything.
    std::ofstream f(deep);
    f << R"({"cniVersion":"1.0.0","ips":[{"address":"10.9.0.160/24"}],"dns":{"x":)";
    f << std::string(100000, '[') << std::string(100000, ']') << "}}";
    std::ofstream b(big);
    b << R"({"cniVersion":"1.0.0","ips":[{"address":"10.9.0.160/24"}],"pad":")" << std::string(2 << 20, 'x')
      << "\"}";
  }
  const std::string bin = FakePlugin(t, "deep-ipam", "cat " + deep);
  FakePlugin(t, "big-ipam", "cat " + big);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  for (const auto& [type, words] : std::vector<std::pair<std::string, std::string>>{
           {"deep-ipam", "deeper than"}, {"big-ipam", "more than"}}) {
    CAPTURE(type);
    const json config = IpamConfig(t, {{"type", type}});
    const std::string cid = t.ContainerId(type);
    kt::PluginResult add = kt::RunPlugin(CallWithPath(t, "ADD", cid, config, bin));
    INFO("ADD: " << kt::Describe(add));
    kt::CheckError(add, 104, {words});
    CHECK(add.json.value("msg", "").find(type) != std::string::npos);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
    CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  }
  CheckDeviceFree(t);
}

TEST_CASE("the IPAM plugin does not start with SIGPIPE ignored") {
  // erdma-cni ignores SIGPIPE while it writes the plugin's stdin; a plugin
  // that inherited that would see EPIPE where a shell pipeline expects to die.
  kt::Topology t({.pods = 1});
  const std::string mask = t.tmp() + "/sigign";
  const std::string bin =
      FakePlugin(t, "sig-ipam",
                 "grep '^SigIgn:' /proc/$$/status > " + mask +
                     "; echo '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.0.161/24\","
                     "\"gateway\":\"10.9.0.1\"}]}'");
  const json config = IpamConfig(t, {{"type", "sig-ipam"}});
  const std::string cid = t.ContainerId("sig");
  kt::PluginResult add = kt::RunPlugin(CallWithPath(t, "ADD", cid, config, bin));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  std::ifstream f(mask);
  std::string label, hex;
  REQUIRE(f >> label >> hex);
  INFO("the plugin's " << label << " " << hex);
  const unsigned long long ignored = std::stoull(hex, nullptr, 16);
  CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
  kt::PluginResult del =
      kt::RunPlugin(CallWithPath(t, "DEL", cid, kt::AsRuntimeWouldForDel(config, add.json), bin));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
}

}  // namespace test_kernel_plugin_ipam_limits_test

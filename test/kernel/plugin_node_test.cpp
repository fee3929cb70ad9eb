// The node admin's file (docs/security.md): what a config may name outside
// its attachment (dataDir, logFile), which node devices move mode may take,
// and the file itself read as hostile input. Every refusal leaves the node,
// the pod and the scratch directory exactly as they were.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_node_test {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Every path under `dir` but those starting with one of `skip`, with its
/// type, owner, mode and content: equal listings = nothing was created,
/// removed, renamed or written.
std::string Tree(const std::string& dir, const std::vector<std::string>& skip = {}) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st {};
    const std::string path = it->path().string();
    if (std::any_of(skip.begin(), skip.end(), [&](const std::string& p) { return path.starts_with(p); }))
      continue;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::ostringstream line;
    line << path << " uid " << st.st_uid << " mode " << std::oct << st.st_mode << std::dec;
    if (S_ISREG(st.st_mode)) line << " " << Read(path);
    lines.push_back(line.str());
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// The call with the node file at `node_file` instead of the harness's.
kt::PluginCall WithNode(kt::PluginCall call, const std::string& node_file) {
  call.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
  return call;
}

/// Runs `call`, expects a CNI error with `code` naming one of `words`, and
/// the node, the pod and everything under t.tmp() but `skip` unchanged.
void Refused(const kt::Topology& t, const kt::PluginCall& call, int code,
             const std::vector<std::string>& words, const std::vector<std::string>& skip = {}) {
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string tree_before = Tree(t.tmp(), skip);
  const kt::PluginResult r = kt::RunPlugin(call);
  INFO(kt::Describe(r));
  CHECK_FALSE(r.timed_out);
  kt::CheckError(r, code, words);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(Tree(t.tmp(), skip) == tree_before);
}

}  // namespace

TEST_CASE(
    "a dataDir or logFile the node file does not allow is refused at ADD with code 7, a dataDir by DEL too, "
    "a logFile passed over by DEL, and nothing changes") {
  kt::Topology t;
  const std::string node = t.tmp() + "/node.json";
  kt::WriteNodeFile(
      node,
      json{{"dataDirs", {t.DataDir()}}, {"logFiles", {t.LogFile()}}, {"allowNodeDevices", {"eth1"}}}.dump());
  const std::string victim = t.tmp() + "/victim";
  std::ofstream(victim) << "not the plugin's\n";
  struct Row {
    const char* what;
    const char* key;
    std::string value;
  };
  for (const Row& row : std::vector<Row>{
           {"dataDir at the root", "dataDir", "/"},
           {"dataDir beside the allowed one", "dataDir", t.tmp() + "/other"},
           {"dataDir below the allowed one (an exact entry)", "dataDir", t.DataDir() + "/sub"},
           {"dataDir through /proc/self/cwd", "dataDir", "/proc/self/cwd" + t.DataDir()},
           {"logFile through /proc/self/cwd", "logFile", "/proc/self/cwd" + t.LogFile()},
           {"logFile on another file (the issue's rotation victim)", "logFile", victim},
           {"logFile in /etc", "logFile", "/etc/erdma-cni-test.log"},
       }) {
    INFO(row.what);
    json config =
        kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
    config[row.key] = row.value;
    config["logMaxBytes"] = 1;
    const std::string refusal =
        std::string(row.key) + ": " + json(row.value).dump() + " is not allowed on this node (" + node + ")";
    Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("paths"), "net1", config), node), 7, {refusal});

    // DEL may not fail on a logFile edited since ADD: one the node does not allow is left unopened, and DEL
    // succeeds, says why on stderr and changes nothing. A dataDir the node does not allow fails it with code
    // 7: DEL may not look there, so it cannot prove there is nothing of the attachment (the attachment's
    // record would have led it to the dataDir ADD used). Either way nothing changes. The allowed log file
    // (and its rotation) takes the line where the config names it: everything else stays as it was.
    const bool data_dir_row = std::string(row.key) == "dataDir";
    const std::vector<std::string> skip = {t.LogFile()};
    const std::string node_before = kt::StableSnapshot(t.node());
    const std::string pod_before = kt::StableSnapshot(t.pod());
    const std::string tree_before = Tree(t.tmp(), skip);
    const kt::PluginResult r =
        kt::RunPlugin(WithNode(kt::Call(t, "DEL", t.ContainerId("paths"), "net1", config), node));
    INFO(kt::Describe(r));
    if (data_dir_row) {
      kt::CheckError(r, 7, {refusal});
      CHECK(r.json.value("msg", "").find("DEL cannot look there") != std::string::npos);
    } else {
      CHECK(r.exit == 0);
      CHECK(r.out.empty());
      CHECK(r.err.find(refusal) != std::string::npos);
      CHECK(r.err.find("logging to stderr only") != std::string::npos);
    }
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
    CHECK(Tree(t.tmp(), skip) == tree_before);
  }
  CHECK_FALSE(kt::FileExists("/etc/erdma-cni-test.log"));
  CHECK(Read(victim) == "not the plugin's\n");

  // What the node file allows works: the file is read, not just refused.
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string cid = t.ContainerId("allowed");
  REQUIRE(kt::RunPlugin(WithNode(kt::Call(t, "ADD", cid, "net1", config), node)).exit == 0);
  REQUIRE(kt::RunPlugin(WithNode(kt::Call(t, "DEL", cid, "net1", config), node)).exit == 0);
  CHECK(Read(t.LogFile()).find("back on the node") != std::string::npos);
}

TEST_CASE("the log file is never opened through a symlink, even where the node file allows the path") {
  kt::Topology t;
  const std::string node = t.tmp() + "/node.json";
  kt::WriteNodeFile(node, json{{"dataDirs", {t.DataDir()}}, {"logFiles", {"/"}}}.dump());
  fs::create_directory(t.tmp() + "/real");
  fs::create_directory_symlink(t.tmp() + "/real", t.tmp() + "/link");
  const std::string tree_before = Tree(t.tmp() + "/real");
  for (const std::string& log :
       {t.tmp() + "/link/erdma-cni.log", "/proc/self/root" + t.tmp() + "/real/erdma-cni.log",
        "/proc/self/cwd/../.." + t.tmp() + "/real/erdma-cni.log"}) {
    INFO(log);
    json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = log});
    // A DEL with nothing to do still configures the log.
    const kt::PluginResult r =
        kt::RunPlugin(WithNode(kt::Call(t, "DEL", t.ContainerId("link"), "net1", config), node));
    INFO(kt::Describe(r));
    if (log.find("/..") != std::string::npos) {
      // ".." is refused by the config itself; DEL logs that to stderr and goes on without a log file.
      CHECK(r.exit == 0);
      CHECK(r.err.find("DEL: ignored: logFile: must be an absolute path or empty; the default is used") !=
            std::string::npos);
    } else {
      CHECK(r.exit == 0);
      CHECK(r.err.find("cannot open logFile") != std::string::npos);
    }
  }
  CHECK(Tree(t.tmp() + "/real") == tree_before);
}

TEST_CASE("log rotation never renames or writes a file that is not the plugin's own log") {
  kt::Topology t;
  const std::string elsewhere = t.tmp() + "/elsewhere";
  std::ofstream(elsewhere) << "precious\n";
  const std::string hard = t.tmp() + "/hard.log";
  fs::create_hard_link(elsewhere, hard);
  const std::string foreign = t.tmp() + "/foreign.log";
  std::ofstream(foreign) << "a user's file\n";
  REQUIRE(::chown(foreign.c_str(), 1000, 1000) == 0);
  for (const std::string& log : {hard, foreign}) {
    INFO(log);
    const std::string tree_before = Tree(t.tmp(), {t.DataDir()});
    json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = log});
    config["logMaxBytes"] = 1;
    const kt::PluginResult r = kt::RunPlugin(kt::Call(t, "DEL", t.ContainerId("rot"), "net1", config));
    INFO(kt::Describe(r));
    CHECK(r.exit == 0);
    CHECK(r.err.find("cannot open logFile") != std::string::npos);
    CHECK_FALSE(kt::FileExists(log + ".1"));
    CHECK(Tree(t.tmp(), {t.DataDir()}) == tree_before);
  }
}

TEST_CASE("a node file that is not root's, is writable by others, is a symlink or is not valid is refused") {
  kt::Topology t;
  const std::string good = json{{"dataDirs", {t.DataDir()}}, {"logFiles", {t.LogFile()}}}.dump();
  const std::string dir = t.tmp() + "/node";
  fs::create_directory(dir);
  kt::WriteNodeFile(dir + "/good.json", good);
  kt::WriteNodeFile(dir + "/other-user.json", good);
  REQUIRE(::chown((dir + "/other-user.json").c_str(), 1000, 1000) == 0);
  kt::WriteNodeFile(dir + "/world-writable.json", good, 0666);
  kt::WriteNodeFile(dir + "/group-writable.json", good, 0664);
  fs::create_symlink(dir + "/good.json", dir + "/link.json");
  fs::create_directory_symlink(dir, t.tmp() + "/dirlink");
  kt::WriteNodeFile(dir + "/garbage.json", "dataDirs = /tmp");
  kt::WriteNodeFile(dir + "/unknown-key.json", R"({"dataDirs": [], "dataDir": "/"})");
  kt::WriteNodeFile(dir + "/deep.json",
                    R"({"dataDirs": )" + std::string(10000, '[') + std::string(10000, ']') + "}");
  kt::WriteNodeFile(dir + "/huge.json", R"({"dataDirs": [")" + std::string(70000, 'a') + R"("]})");
  REQUIRE(::mkfifo((dir + "/fifo.json").c_str(), 0644) == 0);
  struct Row {
    std::string what, path;
    int code;
    std::vector<std::string> words;
  };
  for (const Row& row : std::vector<Row>{
           {"owned by another user", dir + "/other-user.json", 5, {"owned by root"}},
           {"writable by others", dir + "/world-writable.json", 5, {"not writable by group or others"}},
           {"writable by its group", dir + "/group-writable.json", 5, {"not writable by group or others"}},
           {"a symlink", dir + "/link.json", 5, {"symlink"}},
           {"under a symlinked directory", t.tmp() + "/dirlink/good.json", 5, {"symlink"}},
           {"a FIFO", dir + "/fifo.json", 5, {"not a regular file"}},
           {"a directory", dir, 5, {"not a regular file"}},
           {"missing", dir + "/missing.json", 5, {"ERDMA_CNI_NODE_CONFIG"}},
           {"relative", "node.json", 5, {"absolute"}},
           {"larger than 64 KiB", dir + "/huge.json", 5, {"larger than"}},
           {"not JSON", dir + "/garbage.json", 6, {"not valid JSON"}},
           {"nested too deep", dir + "/deep.json", 6, {"deeper than"}},
           {"an unknown key", dir + "/unknown-key.json", 7, {"unknown key \"dataDir\""}},
       }) {
    INFO(row.what);
    json config =
        kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
    Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("nodefile"), "net1", config), row.path), row.code,
            row.words);
  }
}

TEST_CASE("a pod name with a newline cannot forge a line in the log") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string cid = t.ContainerId("forge");
  const std::string forged = "2026-01-01T00:00:00.000Z error [1] FORGED: \x1b[2Kdevice stolen";
  for (const char* command : {"ADD", "DEL"}) {
    kt::PluginCall call = kt::Call(t, command, cid, "net1", config);
    call.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=x\n" + forged;
    const kt::PluginResult r = kt::RunPlugin(call);
    INFO(kt::Describe(r));
    REQUIRE(r.exit == 0);
  }
  const std::string log = Read(t.LogFile());
  INFO(log);
  CHECK(log.find("pod=ml/x\\n2026-01-01T00:00:00.000Z error [1] FORGED: \\x1b[2Kdevice stolen") !=
        std::string::npos);
  CHECK(log.find('\x1b') == std::string::npos);
  // Every line is the plugin's own: none starts with the forged stamp.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) CHECK(line.rfind("2026-01-01T00:00:00.000Z", 0) != 0);
}

TEST_CASE("diag writes control characters in interface names as escapes, never raw") {
  kt::Topology t;
  // The kernel takes any byte in a name but '/', ':', whitespace and NUL.
  kt::ShOk("ip -n " + t.pod() + " link add \"$(printf 'e\\033[31mx')\" type veth peer name vp-esc");
  const kt::ShResult r = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --netns " +
                                t.PodPath() + " --data-dir " + t.DataDir());
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.out.find("e\\x1b[31mx") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("move mode refuses lo and the node's default-route device, and the node file can allow them") {
  kt::Topology t({.enis = 2, .ipv6 = true});
  const std::string strict = t.tmp() + "/strict.json";
  kt::WriteNodeFile(strict, json{{"dataDirs", {t.DataDir()}}, {"logFiles", {t.LogFile()}}}.dump());
  const std::string allowing = t.tmp() + "/allowing.json";
  kt::WriteNodeFile(
      allowing,
      json{{"dataDirs", {t.DataDir()}}, {"logFiles", {t.LogFile()}}, {"allowNodeDevices", {"eth1"}}}.dump());
  auto config = [&](const std::string& dev) {
    return kt::PluginConfig(
        {.device = dev, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  };
  // The refusal is logged and may leave dataDir's empty directories; no
  // state, no claim, and nothing else changes.
  const std::vector<std::string> own = {t.DataDir(), t.LogFile()};
  // eth1's default routes have the lowest metric (200): they are the node's.
  Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("eth1"), "net1", config("eth1")), strict), 7,
          {"eth1, which carries the node's IPv4 default route"}, own);
  Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("lo"), "net1", config("lo")), strict), 7,
          {"lo, which is the node's loopback device"}, own);
  CHECK(kt::StateFiles(t.DataDir()).empty());
  // eth2 carries defaults too, at metric 201 (the node agent's): not the node's.
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string cid2 = t.ContainerId("eth2");
  REQUIRE(kt::RunPlugin(WithNode(kt::Call(t, "ADD", cid2, "net1", config("eth2")), strict)).exit == 0);
  REQUIRE(kt::RunPlugin(WithNode(kt::Call(t, "DEL", cid2, "net1", config("eth2")), strict)).exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");

  // Without its IPv4 default, eth1 still carries the node's IPv6 one.
  kt::ShOk("ip -n " + t.node() + " route del default via " + kt::kGateway4 + " dev eth1 metric 200");
  Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("eth1v6"), "net1", config("eth1")), strict), 7,
          {"eth1, which carries the node's IPv6 default route"}, own);
  CHECK(kt::StateFiles(t.DataDir()).empty());

  // The node admin may allow it; ADD and DEL then work as for any device.
  const std::string before_allowed = kt::StableSnapshot(t.node());
  const std::string cid1 = t.ContainerId("allowed");
  const kt::PluginResult add =
      kt::RunPlugin(WithNode(kt::Call(t, "ADD", cid1, "net1", config("eth1")), allowing));
  INFO(kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(kt::LinkExists(t.pod(), "net1"));
  REQUIRE(kt::RunPlugin(WithNode(kt::Call(t, "DEL", cid1, "net1", config("eth1")), allowing)).exit == 0);
  CHECK(kt::SettledDiff(before_allowed, t.node()) == "");

  // A multipath default at the lowest metric: its second leg's device is the node's too.
  kt::ShOk("ip -n " + t.node() + " route add default metric 100 nexthop via " + kt::kGateway4 +
           " dev eth1 nexthop via " + kt::kGateway4 + " dev eth2");
  Refused(t, WithNode(kt::Call(t, "ADD", t.ContainerId("leg2"), "net1", config("eth2")), strict), 7,
          {"eth2, which carries the node's IPv4 default route"}, own);
  CHECK(kt::StateFiles(t.DataDir()).empty());
  kt::ShOk("ip -n " + t.node() + " route del default metric 100");
}

}  // namespace test_kernel_plugin_node_test

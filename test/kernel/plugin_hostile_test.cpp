// Hostile input, one table per kind (docs/reliability.md, "Bad input"): each
// row is a change to an otherwise good ADD, the CNI error code it must get,
// and the words its message must contain (the field at fault). After every
// row the node and the pod are exactly as before, the scratch directory that
// holds dataDir, the log and the decoys is unchanged but for the log, and the
// plugin answered within the time limit.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_hostile_test {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

/// What a row may change: the call (environment, stdin) and the config. The
/// config is serialized into stdin after `mutate` unless it set `raw`.
struct Input {
  kt::PluginCall& call;
  json& config;
  bool raw = false;
};

struct Row {
  std::string what;
  int code;
  std::vector<std::string> names;  ///< msg contains at least one of these
  std::function<void(Input&)> mutate;
};

/// Every path under `dir` with its type, mode and content, except `skip`:
/// equal listings = nothing was created, removed, followed or written.
std::string Tree(const std::string& dir, const std::string& skip) {
  std::ostringstream out;
  std::error_code ec;
  std::vector<std::string> lines;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string path = it->path().string();
    if (path == skip) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::ostringstream line;
    line << path << " mode " << std::oct << st.st_mode << std::dec;
    if (S_ISLNK(st.st_mode)) line << " -> " << fs::read_symlink(path, ec).string();
    if (S_ISREG(st.st_mode)) {
      std::ifstream f(path, std::ios::binary);
      line << " " << std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    }
    lines.push_back(line.str());
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& l : lines) out << l << "\n";
  return out.str();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

json BaseConfig(const kt::Topology& t, const std::string& version) {
  return kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
}

/// Runs every row on a good ADD config (BaseConfig, then `adjust`) and checks
/// the outcome. Row i speaks cniVersion kVersions[i % 5]: every version is
/// exercised across a table, and each row runs once.
void RunTable(const kt::Topology& t, const std::vector<Row>& rows,
              const std::function<void(json&)>& adjust = nullptr) {
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const std::string& version = kt::kVersions[i % kt::kVersions.size()];
    INFO("row: " << row.what << " (cniVersion " << version << ")");
    const std::string tree_before = Tree(t.tmp(), t.LogFile());
    json config = BaseConfig(t, version);
    if (adjust) adjust(config);
    kt::PluginCall call = kt::Call(t, "ADD", t.ContainerId("hostile"), "net1", config);
    call.timeout = std::chrono::seconds(15);
    Input in{call, config};
    row.mutate(in);
    if (!in.raw) call.stdin_text = config.dump();
    const kt::PluginResult r = kt::RunPlugin(call);
    CHECK_FALSE(r.timed_out);
    kt::CheckError(r, row.code, row.names);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
    CHECK(Tree(t.tmp(), t.LogFile()) == tree_before);
  }
}

/// The row's config with a key holding `depth` nested arrays.
std::string Nested(const json& config, size_t depth) {
  std::string text = config.dump();
  text.pop_back();
  return text + ",\"deep\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

/// A mutation that replaces stdin with `text`.
std::function<void(Input&)> Raw(const std::string& text) {
  return [text](Input& in) {
    in.call.stdin_text = text;
    in.raw = true;
  };
}

/// A mutation that replaces stdin with `edit` applied to the row's config text.
std::function<void(Input&)> RawFrom(const std::function<std::string(std::string)>& edit) {
  return [edit](Input& in) {
    in.call.stdin_text = edit(in.config.dump());
    in.raw = true;
  };
}

}  // namespace

TEST_CASE("hostile stdin gets code 6 and changes nothing") {
  kt::Topology t;
  RunTable(
      t,
      {
          {"4 MiB of stdin (valid JSON)", 6, {"bytes on stdin"}, RawFrom([](std::string good) {
             return good.insert(good.size() - 1, std::string(4 << 20, ' '));
           })},
          {"1 MiB + 1 byte of stdin", 6, {"bytes on stdin"}, RawFrom([](std::string good) {
             return good.insert(good.size() - 1, std::string((1 << 20) + 1 - good.size(), ' '));
           })},
          {"arrays nested 100000 deep",
           6,
           {"nested"},
           Raw(std::string(100000, '[') + std::string(100000, ']'))},
          {"objects nested 100000 deep",
           6,
           {"nested"},
           [](Input& in) {
             std::string s;
             for (int i = 0; i < 100000; ++i) s += "{\"a\":";
             in.call.stdin_text = s + "1" + std::string(100000, '}');
             in.raw = true;
           }},
          {"a good config with a key nested 65 deep",
           6,
           {"nested"},
           [&](Input& in) {
             in.call.stdin_text = Nested(in.config, 65);
             in.raw = true;
           }},
          {"a NUL byte inside a string", 6, {"NUL"}, RawFrom([](std::string good) {
             return good.insert(good.find("erdma-test") + 5, 1, '\0');
           })},
          {"a NUL byte after the object", 6, {"NUL"}, RawFrom([](const std::string& good) {
             return good + '\0';
           })},
          {"only NUL bytes", 6, {"NUL"}, Raw(std::string(64, '\0'))},
          {"invalid UTF-8 in a string",
           6,
           {"JSON"},
           Raw(R"({"cniVersion":"1.0.0","name":"er)"
               "\xff\xfe"
               R"("})")},
          {"an overlong UTF-8 encoding of '/'",
           6,
           {"JSON"},
           Raw(R"({"cniVersion":"1.0.0","name":"a)"
               "\xc0\xaf"
               R"(b"})")},
          {"a lone UTF-16 surrogate escape", 6, {"JSON"}, Raw(R"({"cniVersion":"1.0.0","name":"\ud800"})")},
          {"Latin-1 bytes", 6, {"JSON"}, Raw("{\"cniVersion\":\"1.0.0\",\"name\":\"r\xe9seau\"}")},
          {"empty stdin", 6, {"JSON"}, Raw("")},
          {"a JSON string, not an object", 6, {"object"}, Raw("\"erdma\"")},
      });
}

TEST_CASE("hostile interface and file names get a CNI error and change nothing") {
  kt::Topology t;
  auto env_ifname = [](const std::string& name) { return [name](Input& in) { in.call.ifname = name; }; };
  auto chained_ifname = [](const std::string& name) {
    return [name](Input& in) {
      in.config["ifName"] = name;
      in.config["prevResult"] = kt::TerwayPrevResult(in.config["cniVersion"], in.call.container_id);
    };
  };
  auto device = [](std::string name) {
    return [name](Input& in) { in.config["device"] = {{"name", name}}; };
  };

  RunTable(t, {
                  {"CNI_IFNAME with '/'", 4, {"CNI_IFNAME"}, env_ifname("net/1")},
                  {"CNI_IFNAME \"..\"", 4, {"CNI_IFNAME"}, env_ifname("..")},
                  {"CNI_IFNAME \".\"", 4, {"CNI_IFNAME"}, env_ifname(".")},
                  {"CNI_IFNAME with a space", 4, {"CNI_IFNAME"}, env_ifname("net 1")},
                  {"CNI_IFNAME with ':'", 4, {"CNI_IFNAME"}, env_ifname("net:1")},
                  {"CNI_IFNAME of 16 bytes", 4, {"CNI_IFNAME"}, env_ifname("abcdefghijklmnop")},
                  {"CNI_IFNAME with a newline", 4, {"CNI_IFNAME"}, env_ifname("net\n1")},
                  {"CNI_IFNAME that is not UTF-8", 4, {"CNI_IFNAME"}, env_ifname("net\xff")},
                  {"ifName with '/'", 7, {"ifName"}, chained_ifname("erdma/0")},
                  {"ifName \"..\"", 7, {"ifName"}, chained_ifname("..")},
                  {"ifName with a space", 7, {"ifName"}, chained_ifname("erdma 0")},
                  {"ifName of 16 bytes", 7, {"ifName"}, chained_ifname("erdma0123456789x")},
                  {"device.name with '/'", 7, {"device.name"}, device("eth/1")},
                  {"device.name \"..\"", 7, {"device.name"}, device("..")},
                  {"device.name with a space", 7, {"device.name"}, device("eth 1")},
                  {"device.name of 16 bytes", 7, {"device.name"}, device("eth1eth1eth1eth1")},
                  {"network name with '/'", 7, {"name"}, [](Input& in) { in.config["name"] = "a/b"; }},
                  {"network name \"..\"", 7, {"name"}, [](Input& in) { in.config["name"] = ".."; }},
                  {"CNI_CONTAINERID with \"..\" and '/'",
                   4,
                   {"CNI_CONTAINERID"},
                   [](Input& in) { in.call.container_id = "../../etc"; }},
                  {"ipam.type with '/'",
                   7,
                   {"ipam.type"},
                   [](Input& in) {
                     in.config.erase("addresses");
                     in.config["ipam"] = {{"type", "../../bin/sh"}};
                   }},
              });
}

TEST_CASE("sysctl names that would leave /proc/sys/net get code 7 and change nothing") {
  kt::Topology t;
  auto sysctl = [](std::string name) {
    return [name](Input& in) { in.config["smcr"] = {{"enable", "always"}, {"sysctls", {{name, "1"}}}}; };
  };
  RunTable(t, {
                  {"a name outside net.", 7, {"smcr.sysctls"}, sysctl("kernel.core_pattern")},
                  {"net. then '..'", 7, {"smcr.sysctls"}, sysctl("net.smc..wmem")},
                  {"a '/' climbing out", 7, {"smcr.sysctls"}, sysctl("net.smc/../../kernel/core_pattern")},
                  {"a path with slashes", 7, {"smcr.sysctls"}, sysctl("net/smc/wmem")},
                  {"an absolute path", 7, {"smcr.sysctls"}, sysctl("/proc/sys/net/smc/wmem")},
                  {"a trailing dot", 7, {"smcr.sysctls"}, sysctl("net.smc.")},
                  {"a NUL byte", 7, {"smcr.sysctls"}, sysctl(std::string("net.smc.wmem\0../x", 17))},
                  {"a value of two lines",
                   7,
                   {"smcr.sysctls"},
                   [](Input& in) {
                     in.config["smcr"] = {{"enable", "always"}, {"sysctls", {{"net.smc.wmem", "1\n2"}}}};
                   }},
              });
}

TEST_CASE("a CNI_NETNS that is not a network namespace gets code 4 and changes nothing") {
  kt::Topology t;
  const std::string decoys = t.tmp() + "/decoys";
  fs::create_directory(decoys);
  WriteFile(decoys + "/plain", "not a netns\n");
  fs::create_symlink(decoys + "/plain", decoys + "/link-to-plain");
  fs::create_symlink(decoys + "/missing", decoys + "/dangling");
  REQUIRE(::mkfifo((decoys + "/fifo").c_str(), 0600) == 0);
  auto netns = [](const std::string& path) { return [path](Input& in) { in.call.netns = path; }; };

  RunTable(t, {
                  {"a regular file", 4, {"CNI_NETNS"}, netns(decoys + "/plain")},
                  {"a symlink to a regular file", 4, {"CNI_NETNS"}, netns(decoys + "/link-to-plain")},
                  {"a dangling symlink", 4, {"CNI_NETNS"}, netns(decoys + "/dangling")},
                  {"a directory", 4, {"CNI_NETNS"}, netns(decoys)},
                  {"a FIFO (opening it must not block)", 4, {"CNI_NETNS"}, netns(decoys + "/fifo")},
                  {"/dev/null", 4, {"CNI_NETNS"}, netns("/dev/null")},
                  {"a mount namespace", 4, {"CNI_NETNS"}, netns("/proc/self/ns/mnt")},
                  {"a path that does not exist", 4, {"CNI_NETNS"}, netns("/run/netns/no-such-pod-here")},
                  {"a relative path", 4, {"CNI_NETNS"}, netns("run/netns/pod")},
                  {"empty, for ADD", 4, {"CNI_NETNS"}, netns("")},
              });
}

TEST_CASE(
    "a dataDir that is a symlink or not a directory gets a CNI error and nothing is written through it") {
  kt::Topology t;
  const std::string decoys = t.tmp() + "/decoys";
  fs::create_directories(decoys + "/elsewhere");
  WriteFile(decoys + "/plain", "a file\n");
  fs::create_directory_symlink(decoys + "/elsewhere", decoys + "/data-link");
  // dataDir exists as a real directory whose network or devices directory is
  // a symlink: state or claims would land in the target.
  fs::create_directories(decoys + "/netlink-data");
  fs::create_directory_symlink(decoys + "/elsewhere", decoys + "/netlink-data/erdma-test");
  fs::create_directories(decoys + "/devlink-data");
  fs::create_directory_symlink(decoys + "/elsewhere", decoys + "/devlink-data/devices");
  auto data_dir = [](const std::string& path) { return [path](Input& in) { in.config["dataDir"] = path; }; };

  RunTable(
      t,
      {
          {"dataDir is a symlink to a directory", 5, {"dataDir", "symlink"}, data_dir(decoys + "/data-link")},
          {"dataDir is a regular file", 5, {"not a directory"}, data_dir(decoys + "/plain")},
          {"dataDir/<network> is a symlink", 5, {"symlink"}, data_dir(decoys + "/netlink-data")},
          {"dataDir/devices is a symlink", 5, {"symlink"}, data_dir(decoys + "/devlink-data")},
          {"dataDir is relative", 7, {"dataDir"}, data_dir("run/erdma-cni")},
          {"dataDir climbs with \"..\"", 7, {"dataDir"}, data_dir(decoys + "/../../etc")},
          {"logFile is relative", 7, {"logFile"}, [](Input& in) { in.config["logFile"] = "erdma.log"; }},
      });
}

TEST_CASE("CNI_PATH entries that are relative or not directories get code 4 and change nothing") {
  kt::Topology t;
  const std::string plain = t.tmp() + "/plain";
  WriteFile(plain, "a file\n");
  auto path = [](const std::string& p) { return [p](Input& in) { in.call.cni_path = p; }; };

  RunTable(t,
           {
               {"a relative entry", 4, {"CNI_PATH"}, path("bin:/usr/lib/cni")},
               {"a \".\" entry", 4, {"CNI_PATH"}, path(".:/usr/lib/cni")},
               {"an entry with a newline", 4, {"CNI_PATH"}, path("/usr/lib/cni\n/bin")},
               {"an entry that is a regular file", 4, {"CNI_PATH"}, path(plain + ":/usr/lib/cni")},
               {"an entry that is a character device", 4, {"CNI_PATH"}, path("/usr/lib/cni:/dev/null")},
           },
           [](json& config) {
             // An IPAM plugin to find, so that CNI_PATH matters.
             config.erase("addresses");
             config["ipam"] = {{"type", "static"}, {"addresses", {{{"address", "10.9.0.77/24"}}}}};
           });
}

}  // namespace test_kernel_plugin_hostile_test

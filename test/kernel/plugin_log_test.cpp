// The log file: one line per step tagged with the attachment, errors also on
// stderr, and a size cap that rotates it to <logFile>.1.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_log_test {

using nlohmann::json;

namespace {
std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("the log tags every line with the attachment and rotates at logMaxBytes") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("log");
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=trainer-0";
  REQUIRE(kt::RunPlugin(add).exit == 0);
  const std::string log = Read(t.LogFile());
  CHECK(log.find("net=erdma-test cid=" + cid + " if=net1 pod=ml/trainer-0") != std::string::npos);
  CHECK(log.find(" info ") != std::string::npos);
  CHECK(log.find("move into pod as net1") != std::string::npos);
  // A run that finds the file at logMaxBytes renames it to <logFile>.1 first.
  config["logMaxBytes"] = std::filesystem::file_size(t.LogFile());
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
  CHECK(kt::FileExists(t.LogFile() + ".1"));
  CHECK(Read(t.LogFile() + ".1") == log);
  CHECK(std::filesystem::file_size(t.LogFile()) < log.size());
  CHECK(Read(t.LogFile()).find("back on the node") != std::string::npos);

  // Errors go to stderr too, where runtimes capture them.
  config["device"] = {{"name", "nosuchdev"}};
  kt::PluginResult bad = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("bad"), "net1", config));
  CHECK(bad.exit == 1);
  CHECK(bad.err.find("error 100") != std::string::npos);
}

TEST_CASE("one invocation's log stays within logMaxBytes: one rotation, then lines dropped with a note") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["logMaxBytes"] = 400;  // an ADD at debug level writes more than twice that
  const std::string cid = t.ContainerId("cap");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  CHECK(std::filesystem::file_size(t.LogFile()) <= 400);
  REQUIRE(kt::FileExists(t.LogFile() + ".1"));
  CHECK(std::filesystem::file_size(t.LogFile() + ".1") <= 400);
  CHECK_THAT(Read(t.LogFile()),
             Catch::EndsWith("further log lines are dropped: logMaxBytes (400) reached\n"));
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
  CHECK(std::filesystem::file_size(t.LogFile()) <= 400);
}

TEST_CASE("a config that would flood the log or the error is summarised and cut to a bound") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("flood");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  REQUIRE(add.exit == 0);
  // DEL of a live attachment whose config gained 75,919 keys since ADD: each a warning, five said.
  json edited = kt::AsRuntimeWouldForDel(config, add.json);
  for (int i = 0; i < 75919; ++i) edited["k" + std::to_string(i)] = 0;
  const auto before = std::filesystem::file_size(t.LogFile());
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", edited));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  const std::string log = Read(t.LogFile());
  CHECK(std::filesystem::file_size(t.LogFile()) - before < 4096);
  size_t said = 0;
  for (size_t at = log.find("not a key of erdma-cni"); at != std::string::npos;
       at = log.find("not a key of erdma-cni", at + 1))
    ++said;
  CHECK(said == 5);
  CHECK(log.find("and 75914 more keys erdma-cni does not know") != std::string::npos);
  // A 512 KiB key at ADD: refused (code 7) naming it cut, its length said.
  json big = config;
  big[std::string(512 << 10, 'k')] = 1;
  kt::PluginResult refused = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("bigkey"), "net1", big));
  kt::CheckError(refused, 7, {"(524288 bytes)"});
  CHECK(refused.out.size() < 8192);
  CHECK(refused.err.size() < 16384);
}

}  // namespace test_kernel_plugin_log_test

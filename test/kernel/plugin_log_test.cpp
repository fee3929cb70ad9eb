// The log file: one line per step tagged with the attachment, errors also on
// stderr, and a size cap that rotates it to <logFile>.1.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/kernel/harness.h"

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
  config["logMaxBytes"] = 1000;
  const std::string cid = t.ContainerId("log");
  kt::PluginCall add = kt::Call(t, "ADD", cid, "net1", config);
  add.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=trainer-0";
  REQUIRE(kt::RunPlugin(add).exit == 0);
  const std::string log = Read(t.LogFile());
  CHECK(log.find("net=erdma-test cid=" + cid + " if=net1 pod=ml/trainer-0") != std::string::npos);
  CHECK(log.find(" info ") != std::string::npos);
  CHECK(log.find("move into pod as net1") != std::string::npos);
  // An ADD at debug level writes more than 1000 bytes: the next run rotates.
  REQUIRE(std::filesystem::file_size(t.LogFile()) >= 1000);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
  CHECK(kt::FileExists(t.LogFile() + ".1"));
  CHECK(Read(t.LogFile() + ".1") == log);
  CHECK(std::filesystem::file_size(t.LogFile()) < 1000);
  CHECK(Read(t.LogFile()).find("back on the node") != std::string::npos);

  // Errors go to stderr too, where runtimes capture them.
  config["device"] = {{"name", "nosuchdev"}};
  kt::PluginResult bad = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("bad"), "net1", config));
  CHECK(bad.exit == 1);
  CHECK(bad.err.find("error 100") != std::string::npos);
}

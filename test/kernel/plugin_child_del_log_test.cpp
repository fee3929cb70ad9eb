// What a macvlan child's DEL says in the log: the child it deleted and the
// parent it left alone (a child has no device of the node to bring back).
#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_child_del_log_test {

using nlohmann::json;

TEST_CASE("a macvlan child's DEL logs the child it deleted and its untouched parent") {
  kt::Topology t;
  kt::ConfigSpec spec{.name = "erdma-macvlan",
                      .data_dir = t.DataDir(),
                      .log_file = t.LogFile(),
                      .ipam = json{{"type", "host-local"},
                                   {"subnet", kt::kSubnet4},
                                   {"rangeStart", "10.9.0.100"},
                                   {"rangeEnd", "10.9.0.140"},
                                   {"dataDir", t.tmp() + "/ipam"}}};
  spec.extra = {{"mode", "macvlan"}, {"macvlan", {{"mode", "bridge"}}}};
  json config = kt::PluginConfig(spec);
  const std::string cid = t.ContainerId("child");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json))).exit ==
          0);
  std::ifstream in(t.LogFile());
  const std::string log(std::istreambuf_iterator<char>(in), {});
  INFO("log: " << log);
  CHECK(log.find("detached: macvlan child net1 deleted; its parent " + t.eni(1).name + " was not touched") !=
        std::string::npos);
  CHECK(log.find("detached:  is back on the node") == std::string::npos);
}

}  // namespace test_kernel_plugin_child_del_log_test

// Devices without carrier: a pool passes over one that is up without carrier
// (NCCL would not use it), a device the config names is attached as it is,
// with a warning in the log.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_carrier_test {

using nlohmann::json;

namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a pool passes over a device up without carrier, a named one is attached with a warning") {
  kt::Topology t({.enis = 2});
  // eth1's peer on the VPC bridge goes down: eth1 stays up, without carrier.
  REQUIRE(kt::Sh("ip -n " + t.vpc() + " link set eni1 down").exit == 0);
  REQUIRE(kt::Sh("for i in $(seq 50); do [ \"$(ip netns exec " + t.node() + " cat /sys/class/net/" +
                 t.eni(1).name + "/carrier)\" = 0 ] && exit 0; sleep 0.1; done; exit 1")
              .exit == 0);

  json pool = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  pool["device"] = {{"pool", {{"names", {t.eni(1).name, t.eni(2).name}}}}, {"count", 1}};
  const std::string a = t.ContainerId("pool");
  const kt::PluginResult added = kt::RunPlugin(kt::Call(t, "ADD", a, "net1", pool));
  INFO(kt::Describe(added));
  REQUIRE(added.exit == 0);
  CHECK(kt::Sh("ip netns exec " + t.node() + " ip link show " + t.eni(2).name).exit != 0);  // eth2 moved
  CHECK(Read(t.LogFile()).find("passed over: " + t.eni(1).name + " (link down: no carrier)") !=
        std::string::npos);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", a, "net1", pool)).exit == 0);

  json named = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  named["device"] = {{"name", t.eni(1).name}};
  const std::string b = t.ContainerId("named");
  const kt::PluginResult taken = kt::RunPlugin(kt::Call(t, "ADD", b, "net1", named));
  INFO(kt::Describe(taken));
  REQUIRE(taken.exit == 0);
  CHECK(Read(t.LogFile()).find(t.eni(1).name + ": link down: no carrier; attached as it is") !=
        std::string::npos);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", b, "net1", named)).exit == 0);
}

}  // namespace test_kernel_plugin_carrier_test

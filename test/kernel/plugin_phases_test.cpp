// ERDMA_CNI_PHASES: the plugin's own account of where an invocation's CPU
// goes (base/phase.h), which the benchmark's --phases turns into a table
// (docs/performance.md). Its result and effect are the same with it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_phases_test {

using nlohmann::json;

namespace {

// The "erdma-cni phases (CPU us): name=us ..." line of `err` as name ->
// microseconds (each name once, each a count); empty when there is no line.
std::map<std::string, long> Phases(const std::string& err) {
  const std::string head = "erdma-cni phases (CPU us):";
  const size_t at = err.find(head);
  if (at == std::string::npos) return {};
  std::istringstream in(err.substr(at + head.size(), err.find('\n', at) - at - head.size()));
  std::map<std::string, long> phases;
  std::string item;
  while (in >> item) {
    const size_t eq = item.find('=');
    INFO(item);
    REQUIRE(eq != std::string::npos);
    REQUIRE(eq + 1 < item.size());
    REQUIRE(item.find_first_not_of("0123456789", eq + 1) == std::string::npos);
    CHECK(phases.emplace(item.substr(0, eq), std::stol(item.substr(eq + 1))).second);
  }
  return phases;
}

std::set<std::string> PhaseNames(const std::string& err) {
  std::set<std::string> names;
  for (const auto& [name, _] : Phases(err)) names.insert(name);
  return names;
}

}  // namespace

TEST_CASE("ERDMA_CNI_PHASES: a move ADD and DEL print their CPU by phase on stderr, without it, nothing") {
  kt::Topology t({.enis = 1, .pods = 1});
  const json config =
      kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginCall add_call = kt::Call(t, "ADD", t.ContainerId("phases"), "net1", config);
  add_call.extra_env = {"ERDMA_CNI_PHASES=1"};
  kt::PluginResult add = kt::RunPlugin(add_call);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(add.json.value("interfaces", json::array()).size() == 1);
  CHECK(kt::LinkExists(t.pod(), "net1"));
  const std::set<std::string> added = PhaseNames(add.err);
  for (const char* name : {"start-up", "input", "config", "node-file", "lookup", "netlink-open", "netns",
                           "state-dir", "claim", "netlink", "steps", "state-write", "result", "output"}) {
    INFO(name);
    CHECK(added.count(name) == 1);
  }

  kt::PluginCall del_call = kt::Call(t, "DEL", t.ContainerId("phases"), "net1", config);
  del_call.extra_env = {"ERDMA_CNI_PHASES=1"};
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  REQUIRE(del.exit == 0);
  const std::set<std::string> deleted = PhaseNames(del.err);
  for (const char* name : {"start-up", "config", "state-dir", "state-read", "claim", "netlink", "steps",
                           "state-remove", "finish"}) {
    INFO(name);
    CHECK(deleted.count(name) == 1);
  }
  CHECK(kt::SettledDiff(node_before, t.node()).empty());

  // Without the variable: the same ADD prints no account.
  kt::PluginResult plain = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("plain"), "net1", config));
  INFO("plain ADD: " << kt::Describe(plain));
  REQUIRE(plain.exit == 0);
  CHECK(plain.err.find("phases") == std::string::npos);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", t.ContainerId("plain"), "net1", config)).exit == 0);
}

TEST_CASE("ERDMA_CNI_PHASES: the IPAM plugin's own CPU is a phase apart from running it") {
  if (!std::filesystem::exists("/usr/lib/cni/static")) {
    FAIL("/usr/lib/cni/static is missing: apt-get install containernetworking-plugins");
  }
  kt::Topology t({.enis = 1, .pods = 1});
  const json ipam = {
      {"type", "static"},
      {"addresses", json::array({{{"address", "10.9.0.150/24"}, {"gateway", kt::kGateway4}}})}};
  const json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = ipam});

  for (const char* command : {"ADD", "DEL"}) {
    kt::PluginCall call = kt::Call(t, command, t.ContainerId("phases"), "net1", config);
    call.extra_env = {"ERDMA_CNI_PHASES=1"};
    kt::PluginResult r = kt::RunPlugin(call);
    INFO(command << ": " << kt::Describe(r));
    REQUIRE(r.exit == 0);
    const auto phases = Phases(r.err);
    REQUIRE(phases.count("ipam-exec") == 1);
    REQUIRE(phases.count("ipam-plugin") == 1);
    // The plugin is a Go program: its start-up alone takes well over 100 us
    // of CPU, which only its rusage (not our clock) can show.
    CHECK(phases.at("ipam-plugin") >= 100);
  }
  CHECK(kt::Addresses(t.pod(), "net1").empty());
}

}  // namespace test_kernel_plugin_phases_test

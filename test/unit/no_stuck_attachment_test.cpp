// No attachment is stuck: a step that failed without changing anything
// leaves the journal, so that neither the rollback nor any later DEL owes it
// an undo that could only fail (a read-only sysctl, an IPAM plugin that is
// not there), while what did change is still undone.
#include "cni/driver/registry.h"
#include "test/unit/fake_node.h"

namespace test_unit_no_stuck_attachment_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

namespace {

const char* kIpam = R"(,"ipam":{"type":"host-local","subnet":"10.9.0.0/24"})";
const char* kAnnotated = R"(,"runtimeConfig":{"io.kubernetes.cri.pod-annotations":)"
                         R"({"network.alibabacloud.com/erdma-smcr":"true"}})";

// A node whose kernel has SMC, with the pod's sysctls as on Alibaba Cloud Linux 3.
struct SmcNode : Node {
  fake::SmcWorld smc{world};
  SmcNode() {
    opener.EnableSmc(&smc);
    opener.sysctls.Set(pod_ns, "net.smc.tcp2smc", "0");
    opener.sysctls.Set(pod_ns, "net.ipv6.conf.all.disable_ipv6", "0");
    opener.sysctls.Set(fake::World::kRoot, "net.smc.tcp2smc", "0");
  }
  std::string Everything() {
    return world.Snapshot().Describe() + smc.Describe() + opener.sysctls.Describe();
  }
};

}  // namespace

TEST_CASE("an IPAM plugin missing from CNI_PATH fails ADD with code 104 and leaves no IPAM DEL owed",
          "[engine][stuck]") {
  Node n;
  const std::string before = n.world.Snapshot().Describe();
  n.ipam.missing = true;
  auto cfg = n.Config(kIpam);
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kIpam);
  CHECK_THAT(res.error().msg, Catch::Contains("host-local"));
  CHECK(n.world.Snapshot().Describe() == before);
  CHECK(n.StateFiles().empty());
  CHECK(n.ipam.calls == std::vector<std::string>{"host-local ADD"});  // no DEL of what never ran
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  // The device is free: the next pod takes it once the plugin is installed.
  n.ipam.missing = false;
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2")).ok());
}

TEST_CASE("an IPAM plugin that ran and failed still gets its DEL on rollback", "[engine][stuck]") {
  Node n;
  n.ipam.fail_add = 1;
  auto res = n.Add(n.Config(kIpam), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(n.ipam.calls == std::vector<std::string>{"host-local ADD", "host-local DEL"});
  CHECK(n.StateFiles().empty());
}

TEST_CASE(
    "a smcr sysctl that is read-only in the pod fails ADD with code 114 and a whole rollback that frees "
    "the device",
    "[engine][stuck][smcr]") {
  SmcNode n;
  const std::string before = n.Everything();
  n.opener.sysctls.ReadOnly(n.pod_ns, "net.ipv6.conf.all.disable_ipv6");
  auto cfg = n.Config(kAnnotated);
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kSmcUnsupported);
  CHECK_THAT(res.error().msg, Catch::Contains("net.ipv6.conf.all.disable_ipv6") &&
                                  Catch::Contains("read-only") && Catch::Contains("smcr.disableIPv6"));
  CHECK(n.Everything() == before);  // tcp2smc, written before it, is back to 0
  CHECK(n.StateFiles().empty());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  REQUIRE(n.Add(n.Config(), n.MakeEnv(cni::Command::kAdd, "c2")).ok());  // the device answers, not 11
}

TEST_CASE("ipamTimeoutMs takes 100..300000 milliseconds and refuses anything else with code 7 naming it",
          "[config][ipam]") {
  auto parse = [](const std::string& v) {
    return conf::Parse(cni::Modes(),
                       R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni","device":{"name":"eth1"},)"
                       R"("ipamTimeoutMs":)" +
                           v + "}");
  };
  auto ok = parse("1500");
  REQUIRE(ok.ok());
  CHECK(ok->ipam_timeout_ms == 1500);
  auto absent = conf::Parse(
      cni::Modes(), R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni","device":{"name":"eth1"}})");
  REQUIRE(absent.ok());
  CHECK(absent->ipam_timeout_ms == conf::kDefaultIpamTimeoutMs);
  for (const char* bad : {"0", "99", "300001", "-1", "\"1000\"", "1.5"}) {
    CAPTURE(bad);
    auto res = parse(bad);
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().code == base::Code::kInvalidConfig);
    CHECK_THAT(res.error().msg, Catch::StartsWith("ipamTimeoutMs"));
  }
}

}  // namespace test_unit_no_stuck_attachment_test

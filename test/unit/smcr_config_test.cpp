// The smcr config section and the erdma-smcr annotation.
#include "conf/smcr_config.h"

#include <catch2/catch.hpp>

#include "cni/driver/registry.h"
#include "conf/config.h"
#include "netlink/sysctl.h"

namespace test_unit_smcr_config_test {

using nlohmann::json;

namespace {

base::Result<conf::Config> ParseWith(const json& extra) {
  json c = {{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "erdma-cni"}, {"device", {{"name", "eth1"}}}};
  for (auto& [k, v] : extra.items()) c[k] = v;
  return conf::Parse(cni::Modes(), c.dump());
}

}  // namespace

TEST_CASE("sysctl names must stay under /proc/sys/net", "[smcr]") {
  for (const char* ok : {"net.smc.tcp2smc", "net.ipv6.conf.all.disable_ipv6", "net.ipv4.conf.eth0.rp_filter",
                         "net.smc.smcr_buf_type"}) {
    INFO(ok);
    CHECK(netlink::IsSafeSysctlName(ok));
  }
  for (const char* bad : {"net..smc", "net.smc.", ".net.smc", "kernel.core_pattern", "net", "net.",
                          "net/smc/x", "net.smc/../../../kernel/core_pattern", "net.smc. x", "net.smc.x\n",
                          "vm.overcommit", "net.smc.*", "net.smc.x=1", ""}) {
    INFO(bad);
    CHECK_FALSE(netlink::IsSafeSysctlName(bad));
  }
}

TEST_CASE("smcr keys with wrong values are code 7 naming the key", "[smcr]") {
  struct Case {
    json smcr;
    const char* key;
  };
  const std::vector<Case> cases = {
      {{{"enable", "sometimes"}}, "smcr.enable"},
      {{{"sysctls", {{"kernel.core_pattern", "|/bin/sh"}}}}, "smcr.sysctls"},
      {{{"sysctls", {{"net.smc/../../kernel/x", "1"}}}}, "smcr.sysctls"},
      {{{"sysctls", {{"net.smc.wmem", 1}}}}, "smcr.sysctls.net.smc.wmem"},
      {{{"sysctls", "net.smc.wmem=1"}}, "smcr.sysctls"},
      {{{"disableIPv6", "yes"}}, "smcr.disableIPv6"},
      {{{"pnetId", "lower-case"}}, "smcr.pnetId"},
      {{{"pnetId", "0123456789ABCDEFG"}}, "smcr.pnetId"},
      {{{"ueid", std::string(33, 'A')}}, "smcr.ueid"},
      {{{"onUnsupported", "ignore"}}, "smcr.onUnsupported"},
  };
  for (const auto& c : cases) {
    INFO(c.smcr.dump());
    auto cfg = ParseWith({{"smcr", c.smcr}});
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.error().code == base::Code::kInvalidConfig);
    CHECK_THAT(cfg.error().msg, Catch::StartsWith(c.key));
  }
}

TEST_CASE("smcr defaults follow the ACK controller", "[smcr]") {
  auto cfg = ParseWith(json::object());
  REQUIRE(cfg.ok());
  CHECK(cfg->smcr.enable == conf::SmcrConfig::Enable::kAnnotation);
  CHECK(cfg->smcr.sysctls == std::vector<std::pair<std::string, std::string>>{{"net.smc.tcp2smc", "1"}});
  CHECK(cfg->smcr.disable_ipv6);
  CHECK(cfg->smcr.pnet_id == "auto");
  CHECK(cfg->smcr.on_unsupported_error);
  CHECK_FALSE(cfg->smcr_wanted);
}

TEST_CASE("the erdma-smcr annotation parses like a Kubernetes boolean from either source", "[smcr]") {
  const std::vector<std::pair<std::string, bool>> values = {
      {"true", true},   {"True", true},   {"TRUE", true},   {"1", true},
      {"false", false}, {"False", false}, {"FALSE", false}, {"0", false}};
  for (const auto& [v, want] : values) {
    INFO(v);
    auto rc =
        ParseWith({{"runtimeConfig",
                    {{"io.kubernetes.cri.pod-annotations", {{"network.alibabacloud.com/erdma-smcr", v}}}}}});
    REQUIRE(rc.ok());
    CHECK(rc->smcr_wanted == want);
    auto multus = ParseWith({{"args", {{"cni", {{"network.alibabacloud.com/erdma-smcr", v}}}}}});
    REQUIRE(multus.ok());
    CHECK(multus->smcr_wanted == want);
    auto short_key = ParseWith({{"args", {{"cni", {{"erdma-smcr", v}}}}}});
    REQUIRE(short_key.ok());
    CHECK(short_key->smcr_wanted == want);
  }
  for (const char* bad : {"yes", "on", "t", "", "true "}) {
    INFO(bad);
    auto cfg = ParseWith({{"args", {{"cni", {{"erdma-smcr", bad}}}}}});
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.error().code == base::Code::kInvalidConfig);
    CHECK_THAT(cfg.error().msg, Catch::Contains("erdma-smcr"));
  }
}

TEST_CASE("a misspelt erdma-smcr in args.cni is a warning naming the key it resembles, others' keys none",
          "[smcr]") {
  auto typo = ParseWith({{"args", {{"cni", {{"erdma_smcr", "true"}}}}}});
  REQUIRE(typo.ok());
  CHECK_FALSE(typo->smcr_wanted);
  CHECK(typo->warnings ==
        std::vector<std::string>{"args.cni.erdma_smcr: erdma-cni reads no such key, did you mean "
                                 "args.cni.erdma-smcr? It is left alone"});
  auto annotation = ParseWith({{"args", {{"cni", {{"network.alibabacloud.com/erdma-smc", "true"}}}}}});
  REQUIRE(annotation.ok());
  REQUIRE(annotation->warnings.size() == 1);
  CHECK_THAT(annotation->warnings[0],
             Catch::Contains("did you mean args.cni.network.alibabacloud.com/erdma-smcr?"));
  // args.cni is the whole chain's: what other plugins read passes without a word.
  auto others = ParseWith({{"args", {{"cni", {{"ips", {"10.0.0.2/24"}}, {"labels", json::array()}}}}}});
  REQUIRE(others.ok());
  CHECK(others->warnings.empty());
}

TEST_CASE("smcr.enable always and never override the annotation", "[smcr]") {
  const json annotated = {
      {"io.kubernetes.cri.pod-annotations", {{"network.alibabacloud.com/erdma-smcr", "true"}}}};
  auto never = ParseWith({{"runtimeConfig", annotated}, {"smcr", {{"enable", "never"}}}});
  REQUIRE(never.ok());
  CHECK_FALSE(never->smcr_wanted);
  auto always = ParseWith({{"smcr", {{"enable", "always"}}}});
  REQUIRE(always.ok());
  CHECK(always->smcr_wanted);
}

}  // namespace test_unit_smcr_config_test

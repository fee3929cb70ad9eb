// Whether a pod asked for the attachment (cni/command/pod_request.h), for the
// decisions that need no kubelet: mode none, a pool's opt-in annotation, a
// standalone config, device.required. The kubelet's part (device.resource)
// runs against the fake kubelet in test/kernel/plugin_node_conflist_test.cpp.
#include "cni/command/pod_request.h"

#include <catch2/catch.hpp>

#include "cni/driver/registry.h"

namespace test_unit_pod_request_test {

using nlohmann::json;

namespace {

conf::Config Parse(json c) {
  c["cniVersion"] = "1.0.0";
  c["name"] = "n";
  c["type"] = "erdma-cni";
  auto parsed = conf::Parse(cni::Modes(), c.dump());
  INFO(c.dump() << ": " << (parsed.ok() ? "" : parsed.error().msg));
  REQUIRE(parsed.ok());
  return *parsed;
}

const json kPrev = {{"cniVersion", "1.0.0"}, {"interfaces", {{{"name", "eth0"}, {"sandbox", "/x"}}}}};

json Annotated(json c, const json& annotations) {
  c["capabilities"] = {{"io.kubernetes.cri.pod-annotations", true}};
  c["runtimeConfig"] = {{"io.kubernetes.cri.pod-annotations", annotations}};
  return c;
}

cni::Env PodEnv() {
  cni::Env env;
  env.command = cni::Command::kAdd;
  env.args = {{"K8S_POD_NAMESPACE", "default"}, {"K8S_POD_NAME", "web-0"}};
  return env;
}

}  // namespace

TEST_CASE("mode none passes a pod through unless it asked for SMC-R") {
  const json none = {{"mode", "none"}, {"prevResult", kPrev}};
  auto plain = cni::WhatThePodAsked(Parse(none), PodEnv(), nullptr);
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->asked);
  CHECK(plain->why.find("default/web-0") != std::string::npos);
  CHECK(plain->why.find("erdma-smcr") != std::string::npos);

  auto smcr = cni::WhatThePodAsked(Parse(Annotated(none, {{"network.alibabacloud.com/erdma-smcr", "true"}})),
                                   PodEnv(), nullptr);
  REQUIRE(smcr.ok());
  CHECK(smcr->asked);
}

TEST_CASE("a chained pool asks the pod's annotation, without the kubelet") {
  const json pool = {{"mode", "move"}, {"device", {{"pool", {{"names", {"eth1"}}}}}}, {"prevResult", kPrev}};
  auto absent = cni::WhatThePodAsked(Parse(pool), PodEnv(), nullptr);
  REQUIRE(absent.ok());
  CHECK_FALSE(absent->asked);
  CHECK(absent->why.find("network.alibabacloud.com/erdma") != std::string::npos);

  auto no = cni::WhatThePodAsked(Parse(Annotated(pool, {{"network.alibabacloud.com/erdma", "false"}})),
                                 PodEnv(), nullptr);
  REQUIRE(no.ok());
  CHECK_FALSE(no->asked);

  auto yes = cni::WhatThePodAsked(Parse(Annotated(pool, {{"network.alibabacloud.com/erdma", "true"}})),
                                  PodEnv(), nullptr);
  REQUIRE(yes.ok());
  CHECK(yes->asked);
  CHECK_FALSE(yes->kubelet);

  auto bad = cni::WhatThePodAsked(Parse(Annotated(pool, {{"network.alibabacloud.com/erdma", 7}})), PodEnv(),
                                  nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Code::kInvalidConfig);
  CHECK(bad.error().msg.find("network.alibabacloud.com/erdma") != std::string::npos);
}

TEST_CASE("a pool never passes a pod through when required or standalone, nor does a named device") {
  json required = {{"mode", "move"},
                   {"device", {{"pool", {{"names", {"eth1"}}}}, {"required", true}}},
                   {"prevResult", kPrev}};
  auto r = cni::WhatThePodAsked(Parse(required), PodEnv(), nullptr);
  REQUIRE(r.ok());
  CHECK(r->asked);

  const json standalone = {{"mode", "move"}, {"device", {{"pool", {{"names", {"eth1"}}}}}}};
  auto s = cni::WhatThePodAsked(Parse(standalone), PodEnv(), nullptr);
  REQUIRE(s.ok());
  CHECK(s->asked);

  const json named = {{"mode", "move"}, {"device", {{"name", "eth1"}}}, {"prevResult", kPrev}};
  auto n = cni::WhatThePodAsked(Parse(named), PodEnv(), nullptr);
  REQUIRE(n.ok());
  CHECK(n->asked);
}

TEST_CASE("a pass-through result is prevResult as it came, in the config's version") {
  const json none = {{"mode", "none"}, {"prevResult", kPrev}};
  CHECK(cni::PassThroughResult(Parse(none)) == kPrev);
}

}  // namespace test_unit_pod_request_test

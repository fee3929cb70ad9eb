#include <catch2/catch.hpp>
#include <string>

#include "install/entry.h"

namespace {

using install::Json;

TEST_CASE("the default entry is docs/deploy.md's and the plugin's parser takes it without a warning") {
  Json e = install::DefaultEntry();
  CHECK(e == Json::parse(R"({
    "type": "erdma-cni",
    "mode": "none",
    "capabilities": {"io.kubernetes.cri.pod-annotations": true, "deviceID": true},
    "smcr": {"enable": "annotation"},
    "logFile": "/var/log/erdma-cni.log"
  })"));
  auto w = install::CheckEntry(e, "1.0.0", "terway-chainer");
  REQUIRE(w.ok());
  CHECK(w->empty());
}

TEST_CASE("an entry the plugin would refuse is refused at install time, naming the key") {
  Json e = install::DefaultEntry();
  e["mode"] = "mvoe";
  auto w = install::CheckEntry(e, "1.0.0", "terway-chainer");
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().msg.find("mode") != std::string::npos);
  Json bad_smcr = install::DefaultEntry();
  bad_smcr["smcr"]["enable"] = "sometimes";
  CHECK_FALSE(install::CheckEntry(bad_smcr, "1.0.0", "terway-chainer").ok());
}

TEST_CASE("an entry whose SMC-R follows the annotation but lacks the capability gets a warning") {
  Json e = install::DefaultEntry();
  e.erase("capabilities");
  auto w = install::CheckEntry(e, "1.0.0", "terway-chainer");
  REQUIRE(w.ok());
  REQUIRE(w->size() == 1);
  CHECK(w->front().find("io.kubernetes.cri.pod-annotations") != std::string::npos);
  e["smcr"]["enable"] = "never";
  auto quiet = install::CheckEntry(e, "1.0.0", "terway-chainer");
  REQUIRE(quiet.ok());
  CHECK(quiet->empty());
}

TEST_CASE("an entry file must be an erdma-cni object without the runtime's keys") {
  CHECK(install::ParseEntry(R"({"type": "erdma-cni", "mode": "none"})").ok());
  CHECK(install::ParseEntry(R"({"type": "bridge"})").error().msg.find("must be \"erdma-cni\"") !=
        std::string::npos);
  CHECK(install::ParseEntry(R"({"mode": "none"})").error().msg.find("must be \"erdma-cni\"") !=
        std::string::npos);
  CHECK(install::ParseEntry(R"({"type": "erdma-cni", "prevResult": {}})")
            .error()
            .msg.find("set by the runtime") != std::string::npos);
  CHECK_FALSE(install::ParseEntry("not json").ok());
}

}  // namespace

// A mode is added in one place: every row of conf::Modes() has its driver,
// a config key for its options that the top level accepts, and its row in
// docs/modes.md.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cni/driver/registry.h"
#include "conf/keys.h"
#include "conf/modes.h"

namespace test_unit_mode_registry_test {

namespace {

std::string ModesDoc() {
  std::ifstream in(std::string(ERDMA_SOURCE_DIR) + "/docs/modes.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("every mode has a driver, a name of its own, an accepted options key and its docs row") {
  const std::string doc = ModesDoc();
  REQUIRE_FALSE(doc.empty());
  std::set<std::string_view> names;
  REQUIRE(conf::Modes().size() >= 5);
  for (const conf::ModeSpec& m : conf::Modes()) {
    INFO(m.name);
    CHECK(names.insert(m.name).second);
    CHECK(conf::ModeNamed(m.name) == m.mode);
    CHECK(std::string(conf::ModeName(m.mode)) == m.name);
    CHECK(cni::FindDriver(m.mode) != nullptr);
    if (!m.options_key.empty()) CHECK(conf::NearestKey(m.options_key, conf::kTop) == m.options_key);
    CHECK(doc.find("| `" + std::string(m.name) + "` | " + std::string(m.pod_gets) + " |") !=
          std::string::npos);
  }
}

TEST_CASE("the messages that list modes name every mode") {
  CHECK(conf::ModeList(nullptr) == R"("move", "macvlan", "ipvlan", "vf" or "none")");
  CHECK(conf::ModeList([](const conf::ModeSpec& s) { return s.sets_mac; }) == R"("macvlan" or "vf")");
  CHECK(conf::ModeList([](const conf::ModeSpec& s) { return s.from_pool; }) ==
        R"("move", "macvlan" or "ipvlan")");
}

}  // namespace test_unit_mode_registry_test

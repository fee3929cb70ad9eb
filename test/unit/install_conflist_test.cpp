#include <catch2/catch.hpp>
#include <string>

#include "install/conflist.h"

namespace test_unit_install_conflist_test {

namespace {

using base::Code;
using install::Edit;
using install::Json;
using install::Placement;

// Terway's chain as a node holds it, in the layout nlohmann writes (two
// spaces, final newline), so a round trip can be compared byte for byte.
const char* const kTerway = R"({
  "cniVersion": "0.4.0",
  "name": "terway-chainer",
  "disableCheck": true,
  "plugins": [
    {
      "type": "terway",
      "eniip_virtual_type": "IPVlan",
      "network_policy_provider": "ebpf",
      "mtu": 1500,
      "ratio": 0.25,
      "comment": "naïve ünïcode",
      "capabilities": {
        "bandwidth": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      },
      "externalSetMarkChain": "KUBE-MARK-MASQ"
    }
  ]
}
)";

Json Entry() {
  return Json::parse(
      R"({"type": "erdma-cni", "mode": "none", "capabilities": {"io.kubernetes.cri.pod-annotations": true}})");
}

Placement After(const std::string& type) { return {Placement::Kind::kAfter, type, 0}; }
Placement At(size_t i) { return {Placement::Kind::kIndex, "", i}; }
Placement Last() { return {}; }

Edit MustInstall(const std::string& text, const Json& entry, const Placement& where) {
  auto e = install::PlanInstall(text, entry, where);
  INFO((e.ok() ? "" : e.error().msg));
  REQUIRE(e.ok());
  return *e;
}

std::string MustFail(const std::string& text, const Placement& where = Last()) {
  auto e = install::PlanInstall(text, Entry(), where);
  REQUIRE_FALSE(e.ok());
  return e.error().msg;
}

std::string Type(const Json& doc, size_t i) { return doc["plugins"][i]["type"].get<std::string>(); }

TEST_CASE("install puts the entry right after terway and keeps every other entry and key as it was") {
  const Json before = Json::parse(kTerway);
  Edit e = MustInstall(kTerway, Entry(), After("terway"));
  CHECK(e.changed);
  CHECK(e.summary == "inserted the erdma-cni entry at position 1 (after terway)");
  const Json after = Json::parse(e.text);
  CHECK(after == e.doc);
  REQUIRE(after["plugins"].size() == 3);
  CHECK(after["plugins"][0] == before["plugins"][0]);
  CHECK(after["plugins"][1] == Entry());
  CHECK(after["plugins"][2] == before["plugins"][1]);
  // Top-level keys: the same, in the same order, with the same values.
  Json top_before = before, top_after = after;
  top_before.erase("plugins");
  top_after.erase("plugins");
  CHECK(top_after == top_before);
  CHECK(top_after.dump() == top_before.dump());
  // The file's layout: two-space indent, final newline.
  CHECK(e.text.rfind("{\n  \"cniVersion\"", 0) == 0);
  CHECK(e.text.ends_with("}\n"));
}

TEST_CASE("install puts the entry at a position counted without it, or last") {
  CHECK(Type(MustInstall(kTerway, Entry(), At(0)).doc, 0) == "erdma-cni");
  CHECK(Type(MustInstall(kTerway, Entry(), At(1)).doc, 1) == "erdma-cni");
  CHECK(Type(MustInstall(kTerway, Entry(), At(2)).doc, 2) == "erdma-cni");
  Edit last = MustInstall(kTerway, Entry(), Last());
  CHECK(Type(last.doc, 2) == "erdma-cni");
  CHECK(last.summary == "inserted the erdma-cni entry at position 2 (last)");
  CHECK(Type(MustInstall(kTerway, Entry(), After("portmap")).doc, 2) == "erdma-cni");
}

TEST_CASE("install refuses a position past the end and a type that is not in the chain") {
  std::string past = MustFail(kTerway, At(3));
  CHECK(past.find("position 3 is past the end") != std::string::npos);
  CHECK(past.find("--last") != std::string::npos);
  std::string missing = MustFail(kTerway, After("calico"));
  CHECK(missing.find("no plugin of type \"calico\"") != std::string::npos);
  CHECK(missing.find("terway, portmap") != std::string::npos);
}

TEST_CASE("a second install of the same entry at the same place changes nothing") {
  for (const Placement& where : {After("terway"), At(0), Last()}) {
    Edit first = MustInstall(kTerway, Entry(), where);
    REQUIRE(first.changed);
    Edit second = MustInstall(first.text, Entry(), where);
    CHECK_FALSE(second.changed);
    CHECK(second.text.empty());
    CHECK(second.summary.find("up to date") != std::string::npos);
  }
}

TEST_CASE("install updates an existing erdma-cni entry in place") {
  Edit first = MustInstall(kTerway, Entry(), After("terway"));
  Json changed = Entry();
  changed["logFile"] = "/var/log/erdma-cni.log";
  changed["mode"] = "move";
  Edit second = MustInstall(first.text, changed, After("terway"));
  CHECK(second.changed);
  CHECK(second.summary == "updated the erdma-cni entry at position 1 (after terway)");
  CHECK(second.doc["plugins"][1] == changed);
  CHECK(second.doc["plugins"].size() == 3);
  CHECK(second.doc["plugins"][0] == first.doc["plugins"][0]);
  CHECK(second.doc["plugins"][2] == first.doc["plugins"][2]);
}

TEST_CASE("install moves an existing erdma-cni entry to the place asked") {
  Edit last = MustInstall(kTerway, Entry(), Last());
  Edit moved = MustInstall(last.text, Entry(), After("terway"));
  CHECK(moved.changed);
  CHECK(moved.summary == "moved the erdma-cni entry from position 2 to position 1 (after terway)");
  CHECK(Type(moved.doc, 1) == "erdma-cni");
  CHECK(moved.doc["plugins"].size() == 3);
}

TEST_CASE("uninstall after install gives back the original conflist exactly") {
  for (const Placement& where : {After("terway"), At(0), Last()}) {
    Edit in = MustInstall(kTerway, Entry(), where);
    auto out = install::PlanUninstall(in.text);
    REQUIRE(out.ok());
    CHECK(out->changed);
    CHECK(out->text == kTerway);
  }
}

TEST_CASE("uninstall without an erdma-cni entry changes nothing") {
  auto out = install::PlanUninstall(kTerway);
  REQUIRE(out.ok());
  CHECK_FALSE(out->changed);
  CHECK(out->summary == "no erdma-cni entry");
}

TEST_CASE("two erdma-cni entries: install refuses, uninstall removes both") {
  Json doc = Json::parse(kTerway);
  doc["plugins"].push_back(Entry());
  doc["plugins"].insert(doc["plugins"].begin(), Entry());
  std::string msg = MustFail(doc.dump(2));
  CHECK(msg.find("2 entries of type erdma-cni (at 0, 3)") != std::string::npos);
  CHECK(msg.find("erdma-cni-install uninstall") != std::string::npos);
  auto out = install::PlanUninstall(doc.dump(2));
  REQUIRE(out.ok());
  CHECK(out->doc == Json::parse(kTerway));
  CHECK(out->summary == "removed 2 erdma-cni entries (positions 0, 3)");
}

TEST_CASE("install refuses a conflist nested deeper than the JSON bound, saying so") {
  // 100k levels used to reach the parser and the tree copies that recurse.
  const std::string deep = R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "x", "a": )" +
                           std::string(100000, '[') + std::string(100000, ']') + "}]}";
  auto out = install::PlanInstall(deep, Entry(), Last());
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code == Code::kDecoding);
  CHECK(out.error().msg.find("JSON nested deeper than 64 levels") != std::string::npos);
  // Uninstall and the entry file read the same way.
  CHECK_FALSE(install::PlanUninstall(deep).ok());
  CHECK(install::ParseObject(std::string(100, '[') + std::string(100, ']')).error().msg.find("deeper") !=
        std::string::npos);
}

TEST_CASE("install refuses text that is not a conflist, saying what it is") {
  CHECK(install::PlanInstall("{\"cniVersion\": \"1.0.0\",", Entry(), Last()).error().code == Code::kDecoding);
  CHECK(MustFail("{\"cniVersion\": \"1.0.0\",").find("not JSON") != std::string::npos);
  CHECK(MustFail("[1, 2]").find("not a JSON object but array") != std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "name": "n"})").find("plugins: missing") != std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "name": "n", "plugins": []})").find("plugins: empty") !=
        std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "name": "n", "plugins": {}})").find("must be an array") !=
        std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"mtu": 1}]})")
            .find("plugins[0]: has no \"type\"") != std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": 3}]})")
            .find("plugins[0]: has no \"type\"") != std::string::npos);
  CHECK(MustFail(R"({"name": "n", "plugins": [{"type": "bridge"}]})").find("cniVersion: missing") !=
        std::string::npos);
  CHECK(MustFail(R"({"cniVersion": "1.0.0", "plugins": [{"type": "bridge"}]})").find("name: missing") !=
        std::string::npos);
}

TEST_CASE("install refuses a single-plugin .conf and says to make it a .conflist") {
  std::string msg = MustFail(R"({"cniVersion": "1.0.0", "name": "n", "type": "bridge", "bridge": "cni0"})");
  CHECK(msg.find("a single-plugin config (type \"bridge\")") != std::string::npos);
  CHECK(msg.find(".conflist") != std::string::npos);
}

TEST_CASE("install refuses duplicate keys, which a rewrite would drop") {
  std::string msg = MustFail(
      R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "terway", "mtu": 1, "mtu": 2}]})");
  CHECK(msg.find("\"mtu\" appears twice") != std::string::npos);
  // Equal keys in different objects are not duplicates.
  MustInstall(R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "a"}, {"type": "b"}]})", Entry(),
              Last());
}

TEST_CASE("install refuses a cniVersion erdma-cni does not speak") {
  std::string msg = MustFail(R"({"cniVersion": "0.2.0", "name": "n", "plugins": [{"type": "terway"}]})");
  CHECK(msg.find("cniVersion \"0.2.0\": erdma-cni speaks 0.3.0 to 1.1.0") != std::string::npos);
}

TEST_CASE("install refuses an entry that is not erdma-cni's") {
  auto e = install::PlanInstall(kTerway, Json::parse(R"({"type": "bridge"})"), Last());
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().msg.find("\"type\": \"erdma-cni\"") != std::string::npos);
}

TEST_CASE("uninstall refuses to leave a chain with no plugins") {
  auto out =
      install::PlanUninstall(R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "erdma-cni"}]})");
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().msg.find("the only plugin") != std::string::npos);
}

TEST_CASE("the result is written in the layout of the file it replaces") {
  const std::string tabs =
      "{\n\t\"cniVersion\": \"1.0.0\",\n\t\"name\": \"n\",\n\t\"plugins\": [{\"type\": \"a\"}]\n}";
  Edit t = MustInstall(tabs, Entry(), Last());
  CHECK(t.text.rfind("{\n\t\"cniVersion\"", 0) == 0);
  CHECK(t.text.ends_with("}"));  // no final newline, as before
  const std::string one_line = R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "a"}]})"
                               "\n";
  Edit o = MustInstall(one_line, Entry(), Last());
  CHECK(o.text.find('\n') == o.text.size() - 1);
  const std::string four =
      "{\n    \"cniVersion\": \"1.0.0\",\n    \"name\": \"n\",\n    \"plugins\": [\n"
      "        {\"type\": \"a\"}\n    ]\n}\n";
  Edit f = MustInstall(four, Entry(), Last());
  CHECK(f.text.find("\n        {\n            \"type\": \"a\"") != std::string::npos);
}

TEST_CASE("a conflist that differs only in layout is not rewritten") {
  Edit first = MustInstall(kTerway, Entry(), Last());
  Json doc = Json::parse(first.text);
  Edit again = MustInstall(doc.dump(), Entry(), Last());  // one line now
  CHECK_FALSE(again.changed);
}

TEST_CASE("validation counts erdma-cni entries when asked to") {
  Json doc = Json::parse(kTerway);
  CHECK(install::Validate(doc, 0).ok());
  CHECK_FALSE(install::Validate(doc, 1).ok());
  CHECK(install::Validate(doc, std::nullopt).ok());
  doc["plugins"].push_back(Entry());
  CHECK(install::Validate(doc, 1).ok());
  CHECK(install::CountOurs(doc) == 1);
  CHECK(install::WithoutOurs(doc) == Json::parse(kTerway));
}

}  // namespace

}  // namespace test_unit_install_conflist_test

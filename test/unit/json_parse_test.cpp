// base::ParseJson: the bound on nesting, at its edge, and what it refuses.
#include "base/json_parse.h"

#include <catch2/catch.hpp>
#include <string>

namespace test_unit_json_parse_test {

namespace {

// `n` arrays, one inside the other, around `inner` ("" for the innermost empty).
std::string Nested(int n, const std::string& inner) {
  return std::string(static_cast<size_t>(n), '[') + inner + std::string(static_cast<size_t>(n), ']');
}

}  // namespace

TEST_CASE("JSON nested to the bound parses, one level more is refused, naming the bound") {
  // A value inside n containers sits at depth n: at most 3 here.
  for (const std::string& ok : {Nested(3, "1"), Nested(4, ""), std::string(R"({"a":{"b":{"c":true}}})")}) {
    INFO(ok);
    auto j = base::ParseJson(ok, "test input", 3);
    CHECK(j.ok());
  }
  for (const std::string& deep :
       {Nested(4, "1"), Nested(5, ""), std::string(R"({"a":{"b":{"c":{"d":1}}}})")}) {
    INFO(deep);
    auto j = base::ParseJson(deep, "test input", 3);
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().code == base::Code::kDecoding);
    CHECK(j.error().msg == "test input: JSON nested deeper than 3 levels");
  }
}

TEST_CASE("the default bound keeps 64 levels and refuses 100,000") {
  CHECK(base::ParseJson(Nested(64, "1"), "x").ok());
  CHECK_FALSE(base::ParseJson(Nested(65, "1"), "x").ok());
  CHECK_FALSE(base::ParseJson(Nested(100000, ""), "x").ok());
}

TEST_CASE("ParseJson builds the same tree as nlohmann's parser, and refuses what is not JSON") {
  const std::string text = R"({"b":[1,-2,3.5,"s\u00e9",null,true,{}],"a":{"x":18446744073709551615}})";
  auto j = base::ParseJson(text, "x");
  REQUIRE(j.ok());
  CHECK(*j == nlohmann::json::parse(text));
  for (const std::string& bad : {std::string("{"), std::string("[1,]"), std::string("{} {}"),
                                 std::string("/* c */ {}"), std::string("{\"a\":1}\0x", 9)}) {
    INFO(bad);
    auto r = base::ParseJson(bad, "x");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Code::kDecoding);
  }
}

}  // namespace test_unit_json_parse_test

// base::JsonWriter against nlohmann's own dump: the same text for every
// ASCII byte, nesting and empty containers; the same refusal of bad UTF-8.
#include "base/json_writer.h"

#include <catch2/catch.hpp>
#include <string>

using nlohmann::json;

TEST_CASE("JsonWriter escapes every ASCII byte as nlohmann's dump does", "[json_writer]") {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = std::string("a") + static_cast<char>(c) + "z";
    base::JsonWriter w;
    w.Str(s);
    INFO("byte " << c);
    CHECK(w.text() == json(s).dump());
  }
  base::JsonWriter w;
  w.Str("snow\u2603man");
  CHECK(w.text() == json("snow\u2603man").dump());
}

TEST_CASE("JsonWriter nests objects and arrays, empty ones included, as the tree would dump",
          "[json_writer]") {
  base::JsonWriter w;
  w.BeginObject().Str("a", "x").Key("b").BeginArray().Uint(1).Int(-2).Bool(false).BeginObject().EndObject();
  w.BeginArray().EndArray().EndArray().Json("c", json{{"k", nullptr}}).Uint("max", UINT64_MAX);
  w.Int("min", INT64_MIN).Bool("t", true).EndObject();
  CHECK(w.text() == R"({"a":"x","b":[1,-2,false,{},[]],"c":{"k":null},"max":18446744073709551615,)"
                    R"("min":-9223372036854775808,"t":true})");
  CHECK(json::parse(w.text()).dump() == w.text());  // valid JSON, keys happen to be sorted
}

TEST_CASE("JsonWriter refuses a string that is not UTF-8, as nlohmann does", "[json_writer]") {
  base::JsonWriter w;
  CHECK_THROWS_AS(w.Str("bad \xff byte"), json::type_error);
}

#include "conf/names.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace test_unit_names_test {

TEST_CASE("IsValidUtf8 accepts well-formed UTF-8 and refuses every malformed shape") {
  for (const std::string& good :
       std::vector<std::string>{"", "net1", "r\xc3\xa9seau", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"}) {
    INFO(good);
    CHECK(conf::IsValidUtf8(good));
  }
  for (const std::string& bad : std::vector<std::string>{
           "\xff",              // never in UTF-8
           "\x80",              // a stray continuation byte
           "\xc0\xaf",          // overlong '/'
           "\xc1\xbf",          // overlong
           "\xe0\x80\xaf",      // overlong '/' in three bytes
           "\xf0\x80\x80\xaf",  // overlong '/' in four bytes
           "\xed\xa0\x80",      // a UTF-16 surrogate
           "\xf4\x90\x80\x80",  // past U+10FFFF
           "\xc3",              // cut short
           "a\xe2\x82",         // cut short
           "\xc3\x28",          // not a continuation byte
           "r\xe9seau",         // Latin-1
       }) {
    INFO(bad);
    CHECK_FALSE(conf::IsValidUtf8(bad));
  }
}

TEST_CASE("IsValidIfName refuses what the kernel refuses and names a CNI result cannot carry") {
  CHECK(conf::IsValidIfName("eth0"));
  CHECK(conf::IsValidIfName("abcdefghijklmno"));  // 15 bytes
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "a/b", "a:b", "a b", "a\tb", "abcdefghijklmnop", "net\xff",
                                std::string("a\0b", 3)}) {
    INFO(bad);
    CHECK_FALSE(conf::IsValidIfName(bad));
  }
}

TEST_CASE("Split keeps every piece, empty ones included, and Join puts the separator between") {
  using Pieces = std::vector<std::string_view>;
  CHECK(conf::Split("", ',') == Pieces{""});
  CHECK(conf::Split("a", ',') == Pieces{"a"});
  CHECK(conf::Split("a,,b,", ',') == Pieces{"a", "", "b", ""});
  CHECK(conf::Split("/sys/devices", '/') == Pieces{"", "sys", "devices"});
  CHECK(conf::Join({}, ", ").empty());
  CHECK(conf::Join({"a"}, ", ") == "a");
  CHECK(conf::Join({"a", "b", "c"}, ", ") == "a, b, c");
  // As the loops it replaced: no separator after a leading "".
  CHECK(conf::Join({"", "a", "b"}, ":") == "a:b");
  CHECK(conf::AsciiLower("0000:3B:00.1 AA:BB") == "0000:3b:00.1 aa:bb");
}

}  // namespace test_unit_names_test

#include "netlink/ip.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <string>

namespace test_unit_ip_test {

namespace {

using netlink::IpAddress;
using netlink::IpPrefix;
using namespace std::string_literals;

TEST_CASE("ipv4 addresses parse and format back to the same text") {
  const std::string text =
      GENERATE(as<std::string>{}, "10.9.0.5", "0.0.0.0", "255.255.255.255", "169.254.1.1", "1.2.3.4");
  auto a = IpAddress::Parse(text);
  REQUIRE(a);
  CHECK(a->family == AF_INET);
  CHECK(a->BitLength() == 32);
  CHECK(a->ByteLength() == 4);
  CHECK(a->ToString() == text);
}

TEST_CASE("ipv4 addresses format as inet_ntop does, for every octet value in every position") {
  for (int v = 0; v < 256; ++v) {
    IpAddress a;
    a.family = AF_INET;
    a.bytes[0] = static_cast<uint8_t>(v);
    a.bytes[1] = static_cast<uint8_t>(255 - v);
    a.bytes[2] = static_cast<uint8_t>((v * 7) % 256);
    a.bytes[3] = static_cast<uint8_t>(v / 2);
    char want[INET_ADDRSTRLEN];
    REQUIRE(inet_ntop(AF_INET, a.bytes.data(), want, sizeof want) != nullptr);
    INFO(v);
    CHECK(a.ToString() == want);
  }
}

TEST_CASE("ipv4 bytes are in network order") {
  auto a = IpAddress::Parse("10.9.0.5");
  REQUIRE(a);
  CHECK(a->bytes[0] == 10);
  CHECK(a->bytes[1] == 9);
  CHECK(a->bytes[2] == 0);
  CHECK(a->bytes[3] == 5);
  for (size_t i = 4; i < 16; ++i) CHECK(a->bytes[i] == 0);
}

TEST_CASE("ipv6 addresses parse and format in RFC 5952 form") {
  const auto [in, out] = GENERATE(table<std::string, std::string>({
      {"fd00::5", "fd00::5"},
      {"FD00:0:0:0:0:0:0:5", "fd00::5"},
      {"::", "::"},
      {"::1", "::1"},
      {"fe80::1:2", "fe80::1:2"},
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
      {"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
  }));
  INFO(in);
  auto a = IpAddress::Parse(in);
  REQUIRE(a);
  CHECK(a->family == AF_INET6);
  CHECK(a->BitLength() == 128);
  CHECK(a->ToString() == out);
}

TEST_CASE("address parsing refuses anything that is not an address") {
  const std::string bad =
      GENERATE(as<std::string>{}, "", "10.9.0", "10.9.0.5.1", "256.0.0.1", "10.9.0.5 ", " 10.9.0.5",
               "10.9.0.05", "0x0a.0.0.1", "10.9.0.5/24", "fd00::5%eth0", "fd00:::5", "1:2:3:4:5:6:7:8:9",
               "localhost", "10.9.0.5\0junk"s, "::1\0"s, std::string(45, '1'), std::string(200, ':'));
  INFO(bad);
  CHECK_FALSE(IpAddress::Parse(bad).has_value());
}

TEST_CASE("an unset address formats as empty text") { CHECK(IpAddress{}.ToString().empty()); }

TEST_CASE("unspecified and link local addresses are recognised") {
  CHECK(IpAddress::Parse("0.0.0.0")->IsUnspecified());
  CHECK(IpAddress::Parse("::")->IsUnspecified());
  CHECK_FALSE(IpAddress::Parse("0.0.0.1")->IsUnspecified());
  CHECK_FALSE(IpAddress::Parse("::1")->IsUnspecified());
  CHECK(IpAddress::Parse("169.254.0.1")->IsLinkLocal());
  CHECK_FALSE(IpAddress::Parse("169.253.0.1")->IsLinkLocal());
  CHECK(IpAddress::Parse("fe80::1")->IsLinkLocal());
  CHECK(IpAddress::Parse("febf::1")->IsLinkLocal());
  CHECK_FALSE(IpAddress::Parse("fec0::1")->IsLinkLocal());
  CHECK_FALSE(IpAddress{}.IsLinkLocal());
}

TEST_CASE("prefixes parse with their host bits and format back") {
  const std::string text = GENERATE(as<std::string>{}, "10.9.0.5/24", "0.0.0.0/0", "10.9.0.5/32",
                                    "fd00::5/64", "::/0", "fd00::5/128");
  auto p = IpPrefix::Parse(text);
  REQUIRE(p);
  CHECK(p->ToString() == text);
}

TEST_CASE("prefix parsing refuses bad lengths and missing parts") {
  const std::string bad =
      GENERATE(as<std::string>{}, "10.9.0.5/33", "fd00::5/129", "10.9.0.5/", "10.9.0.5/-1", "10.9.0.5/-0",
               "10.9.0.5/+8", "10.9.0.5/024", "10.9.0.5/8/8", "10.9.0.5/ 8", "10.9.0.5/8 ", "10.9.0.5/x",
               "/24", "x/24", "10.9.0.5/255.255.255.0", "10.9.0.5/99999999999", "10.9.0.5/8\0"s);
  INFO(bad);
  CHECK_FALSE(IpPrefix::Parse(bad).has_value());
  CHECK_FALSE(IpPrefix::Parse(bad, /*allow_bare=*/true).has_value());
}

TEST_CASE("a bare address is a prefix only when allowed and then gets the full length") {
  CHECK_FALSE(IpPrefix::Parse("10.9.0.5").has_value());
  auto v4 = IpPrefix::Parse("10.9.0.5", /*allow_bare=*/true);
  REQUIRE(v4);
  CHECK(v4->len == 32);
  auto v6 = IpPrefix::Parse("fd00::5", true);
  REQUIRE(v6);
  CHECK(v6->len == 128);
  CHECK(v6->ToString() == "fd00::5/128");
}

TEST_CASE("network clears the host bits and keeps the length") {
  const auto [in, out] = GENERATE(table<const char*, const char*>({
      {"10.9.0.5/24", "10.9.0.0/24"},
      {"10.9.255.255/17", "10.9.128.0/17"},
      {"10.9.0.5/32", "10.9.0.5/32"},
      {"10.9.0.5/0", "0.0.0.0/0"},
      {"255.255.255.255/1", "128.0.0.0/1"},
      {"fd00::5/64", "fd00::/64"},
      {"fd00:1:2:3:4:5:6:7/127", "fd00:1:2:3:4:5:6:6/127"},
      {"ffff::1/3", "e000::/3"},
      {"fd00::5/0", "::/0"},
  }));
  INFO(in);
  CHECK(IpPrefix::Parse(in)->Network().ToString() == out);
}

TEST_CASE("network of a hand-built prefix with a negative length does not write out of bounds") {
  IpPrefix p{*IpAddress::Parse("10.9.0.5"), -3};
  CHECK(p.Network().addr.ToString() == "0.0.0.0");
}

TEST_CASE("host gives the /32 or /128 route of the address") {
  CHECK(IpPrefix::Parse("10.9.0.5/24")->Host().ToString() == "10.9.0.5/32");
  CHECK(IpPrefix::Parse("fd00::5/64")->Host().ToString() == "fd00::5/128");
  CHECK(IpPrefix::Parse("0.0.0.0/0")->IsDefault());
  CHECK_FALSE(IpPrefix::Parse("10.0.0.0/8")->IsDefault());
}

TEST_CASE("contains matches addresses inside the prefix of the same family only") {
  auto p = *IpPrefix::Parse("10.9.0.5/24");
  CHECK(p.Contains(*IpAddress::Parse("10.9.0.1")));
  CHECK(p.Contains(*IpAddress::Parse("10.9.0.255")));
  CHECK_FALSE(p.Contains(*IpAddress::Parse("10.9.1.0")));
  CHECK_FALSE(p.Contains(*IpAddress::Parse("::ffff:10.9.0.1")));
  CHECK_FALSE(p.Contains(*IpAddress::Parse("::a09:1")));

  auto any = *IpPrefix::Parse("0.0.0.0/0");
  CHECK(any.Contains(*IpAddress::Parse("203.0.113.9")));
  CHECK_FALSE(any.Contains(*IpAddress::Parse("::1")));

  auto v6 = *IpPrefix::Parse("fd00::/8");
  CHECK(v6.Contains(*IpAddress::Parse("fdff::1")));
  CHECK_FALSE(v6.Contains(*IpAddress::Parse("fe00::1")));

  auto host = *IpPrefix::Parse("fd00::5/128");
  CHECK(host.Contains(*IpAddress::Parse("fd00::5")));
  CHECK_FALSE(host.Contains(*IpAddress::Parse("fd00::4")));
}

TEST_CASE("addresses and prefixes compare by family bytes and length") {
  CHECK(*IpAddress::Parse("10.0.0.1") < *IpAddress::Parse("10.0.0.2"));
  CHECK(*IpAddress::Parse("10.0.0.1") == *IpAddress::Parse("10.0.0.1"));
  CHECK(*IpAddress::Parse("255.0.0.1") < *IpAddress::Parse("::1"));  // AF_INET < AF_INET6
  CHECK(*IpPrefix::Parse("10.0.0.1/8") != *IpPrefix::Parse("10.0.0.1/16"));
  CHECK(*IpPrefix::Parse("10.0.0.1/8") != *IpPrefix::Parse("10.0.0.0/8"));
}

}  // namespace

}  // namespace test_unit_ip_test

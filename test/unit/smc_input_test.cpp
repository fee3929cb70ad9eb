// The SMC input rules (netlink/smc_input.h): what smc_pnetid_valid and
// smc_clc_ueid_valid accept, in the form the kernel stores it.
#include "netlink/smc_input.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

namespace test_unit_smc_input_test {

namespace {

using netlink::PnetEntry;

template <typename R>
void CheckInvalid(const R& r, const std::string& fragment) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidConfig);
  CHECK(r.error().sys_errno == EINVAL);
  INFO(r.error().msg);
  CHECK(r.error().msg.find(fragment) != std::string::npos);
}

PnetEntry Eth(const std::string& id, const std::string& eth) { return PnetEntry{id, eth, "", 0}; }
PnetEntry Ib(const std::string& id, const std::string& ib, uint8_t port) {
  return PnetEntry{id, "", ib, port};
}

}  // namespace

TEST_CASE("SMC PNET IDs are trimmed and upper-cased, and only 1-16 letters and digits pass", "[smc]") {
  CHECK(*netlink::NormalizePnetId("net1") == "NET1");
  CHECK(*netlink::NormalizePnetId(" \t00163e10f8b0 \n") == "00163E10F8B0");
  CHECK(*netlink::NormalizePnetId("ABCDEFGHIJ123456") == "ABCDEFGHIJ123456");  // 16
  CheckInvalid(netlink::NormalizePnetId(""), "is empty");
  CheckInvalid(netlink::NormalizePnetId("   "), "is empty");
  CheckInvalid(netlink::NormalizePnetId("ABCDEFGHIJ1234567"), "longer than 16");
  CheckInvalid(netlink::NormalizePnetId("NET-1"), "only letters and digits");
  CheckInvalid(netlink::NormalizePnetId("NET 1"), "only letters and digits");
  CheckInvalid(netlink::NormalizePnetId("N\xc3\x84T"), "only letters and digits");
  CheckInvalid(netlink::NormalizePnetId(std::string("NET\0"
                                                    "1",
                                                    5)),
               "only letters and digits");
}

TEST_CASE("SMC user EIDs are upper-cased and hold 1-32 of A-Z 0-9 . - starting alphanumeric", "[smc]") {
  CHECK(*netlink::NormalizeUeid("erdma-smc.v2 ") == "ERDMA-SMC.V2");
  CHECK(*netlink::NormalizeUeid("0") == "0");
  const std::string full(32, 'A');
  CHECK(*netlink::NormalizeUeid(full) == full);
  CheckInvalid(netlink::NormalizeUeid(""), "is empty");
  CheckInvalid(netlink::NormalizeUeid(full + "B"), "longer than 32");
  CheckInvalid(netlink::NormalizeUeid("-ERDMA"), "must start with a letter or digit");
  CheckInvalid(netlink::NormalizeUeid(".ERDMA"), "must start with a letter or digit");
  CheckInvalid(netlink::NormalizeUeid("ERDMA SMC"), "only A-Z, 0-9");
  CheckInvalid(netlink::NormalizeUeid("ERDMA_SMC"), "only A-Z, 0-9");
  CHECK(netlink::TrimUeid("ERDMA-SMC" + std::string(23, ' ')) == "ERDMA-SMC");
}

TEST_CASE("the PNET ID derived from a MAC is its hex digits in upper case, like the ACK controller's",
          "[smc]") {
  CHECK(netlink::PnetIdFromMac("00:16:3e:10:f8:b0") == "00163E10F8B0");
  CHECK(netlink::PnetIdFromMac("AA:BB:CC:DD:EE:FF") == "AABBCCDDEEFF");
  CHECK(*netlink::NormalizePnetId(netlink::PnetIdFromMac("00:16:3e:10:f8:b0")) == "00163E10F8B0");
  for (const char* bad : {"", "00:16:3e:10:f8", "00:16:3e:10:f8:b0:01", "00-16-3e-10-f8-b0",
                          "00:16:3e:10:f8:g0", "0:16:3e:10:f8:b0a", "00:16:3e:10:f8:b"}) {
    INFO(bad);
    CHECK(netlink::PnetIdFromMac(bad).empty());
  }
}

TEST_CASE("an SMC pnet entry is exactly one of a netdev or a device port 1 or 2", "[smc]") {
  CHECK(*netlink::NormalizePnetEntry(Eth("net1", "eth0")) == Eth("NET1", "eth0"));
  CHECK(*netlink::NormalizePnetEntry(Ib("net1", "erdma_0", 2)) == Ib("NET1", "erdma_0", 2));
  CheckInvalid(netlink::NormalizePnetEntry(PnetEntry{"NET1", "eth0", "erdma_0", 1}), "both a netdev");
  CheckInvalid(netlink::NormalizePnetEntry(PnetEntry{"NET1", "", "", 0}), "neither");
  CheckInvalid(netlink::NormalizePnetEntry(Ib("NET1", "erdma_0", 0)), "port 0");
  CheckInvalid(netlink::NormalizePnetEntry(Ib("NET1", "erdma_0", 3)), "port 3");
  CheckInvalid(netlink::NormalizePnetEntry(PnetEntry{"NET1", "eth0", "", 1}), "has an IB port");
  CheckInvalid(netlink::NormalizePnetEntry(Eth("NET1", "abcdefghijklmnop")), "longer than 15");
  CheckInvalid(netlink::NormalizePnetEntry(Ib("NET1", std::string(64, 'x'), 1)), "longer than 63");
  CheckInvalid(netlink::NormalizePnetEntry(Eth("NET-1", "eth0")), "only letters and digits");
  CHECK(netlink::DescribePnetEntry(Eth("NET1", "eth0")) == "NET1 netdev eth0");
  CHECK(netlink::DescribePnetEntry(Ib("NET1", "erdma_0", 1)) == "NET1 ib erdma_0 port 1");
}

}  // namespace test_unit_smc_input_test

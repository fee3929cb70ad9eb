// netlink::smcnl and the SMC input rules: requests checked byte for byte
// against the layout of include/uapi/linux/{genetlink,smc}.h (numbers written
// out, so a wrong enum is caught), and answers laid out by hand the way
// net/netlink/genetlink.c, net/smc/smc_pnet.c and smc_clc.c send them.
#include "netlink/smc_codec.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test/unit/netlink_msg.h"

namespace test_unit_smc_codec_test {

namespace {

using netlink::PnetEntry;
using netlink_test::Append;
using netlink_test::AttrString;
using netlink_test::Bytes;
using netlink_test::ErrorMsg;
using netlink_test::Msg;
using netlink_test::PutU16;
using netlink_test::PutU32;

constexpr uint16_t kPnetFamily = 0x1c;  // what nlctrl happened to give SMC_PNETID
constexpr uint16_t kGenFamily = 0x1d;   // ... and SMC_GEN_NETLINK
constexpr uint16_t kCommand = NLM_F_REQUEST | NLM_F_ACK;
constexpr uint16_t kDump = NLM_F_REQUEST | NLM_F_DUMP;

// --- expected request bytes, little endian --------------------------------

/// nlmsghdr (pid 0: the kernel's) and genlmsghdr {cmd, version 1, reserved 0}.
Bytes Headers(uint32_t len, uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd) {
  Bytes b;
  PutU32(b, len);
  PutU16(b, type);
  PutU16(b, flags);
  PutU32(b, seq);
  PutU32(b, 0);
  Append(b, {cmd, 1, 0, 0});
  return b;
}
Bytes AttrU8(uint16_t type, uint8_t v) {
  Bytes b;
  PutU16(b, 5);
  PutU16(b, type);
  Append(b, {v, 0, 0, 0});
  return b;
}

// --- canned answers, laid out with libnl on a buffer -----------------------

/// A generic netlink message: nlmsghdr typed by the family id, genlmsghdr.
Msg GenlMsg(uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq, uint8_t version = 1) {
  Msg m(family, flags, seq);
  auto* g = static_cast<genlmsghdr*>(m.Extra(sizeof(genlmsghdr)));
  g->cmd = cmd;
  g->version = version;
  return m;
}

/// smc_pnet_set_nla's layout: all four attributes, "n/a" and 255 on the unused side.
Bytes PnetMsg(uint32_t seq, const std::string& id, const std::string& eth, const std::string& ib,
              uint8_t port) {
  return GenlMsg(kPnetFamily, 1 /* SMC_PNETID_GET */, NLM_F_MULTI, seq)
      .Str(1, id)
      .Str(2, eth.empty() ? "n/a" : eth)
      .Str(3, ib.empty() ? "n/a" : ib)
      .U8(4, ib.empty() ? 0xff : port)
      .bytes();
}

/// smc_nl_ueid_dumpinfo: the 32 stored bytes and a NUL.
Bytes UeidMsg(uint32_t seq, const std::string& padded) {
  return GenlMsg(kGenFamily, 9 /* SMC_NETLINK_DUMP_UEID */, NLM_F_MULTI, seq).Str(1, padded).bytes();
}

template <typename R>
void CheckInvalid(const R& r, const std::string& fragment) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidConfig);
  CHECK(r.error().sys_errno == EINVAL);
  INFO(r.error().msg);
  CHECK(r.error().msg.find(fragment) != std::string::npos);
}

template <typename R>
void CheckMalformed(const R& r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kKernel);
  CHECK(r.error().sys_errno == EBADMSG);
}

PnetEntry Eth(const std::string& id, const std::string& eth) { return PnetEntry{id, eth, "", 0}; }
PnetEntry Ib(const std::string& id, const std::string& ib, uint8_t port) {
  return PnetEntry{id, "", ib, port};
}

}  // namespace

// --- requests ---------------------------------------------------------------

TEST_CASE("the SMC pnet dump is SMC_PNETID_GET (1) with REQUEST and DUMP, typed by the family id", "[smc]") {
  CHECK(netlink::smcnl::BuildPnetDump(5, kPnetFamily) == Headers(20, kPnetFamily, kDump, 5, 1));
}

TEST_CASE("adding an SMC netdev entry sends SMC_PNETID_ADD (2) with the upper-cased NAME and ETHNAME",
          "[smc]") {
  Bytes want = Headers(52, kPnetFamily, kCommand, 9, 2);
  Append(want, AttrString(1, "00163E10F8B0"));  // SMC_PNETID_NAME
  Append(want, AttrString(2, "eth0"));          // SMC_PNETID_ETHNAME
  CHECK(*netlink::smcnl::BuildPnetAdd(9, kPnetFamily, Eth("00163e10f8b0", "eth0")) == want);
}

TEST_CASE("adding an SMC device entry sends SMC_PNETID_IBNAME (3) and the port as a u8 SMC_PNETID_IBPORT (4)",
          "[smc]") {
  Bytes want = Headers(52, kPnetFamily, kCommand, 10, 2);
  Append(want, AttrString(1, "NET1"));
  Append(want, AttrString(3, "erdma_0"));
  Append(want, AttrU8(4, 2));
  CHECK(*netlink::smcnl::BuildPnetAdd(10, kPnetFamily, Ib("net1", "erdma_0", 2)) == want);
}

TEST_CASE("deleting an SMC pnet ID sends SMC_PNETID_DEL (3) with the name as the add stored it", "[smc]") {
  Bytes want = Headers(32, kPnetFamily, kCommand, 11, 3);
  Append(want, AttrString(1, "NET1"));
  CHECK(*netlink::smcnl::BuildPnetDel(11, kPnetFamily, " net1 ") == want);
}

TEST_CASE("SMC requests with input the kernel would refuse are not built", "[smc]") {
  CheckInvalid(netlink::smcnl::BuildPnetAdd(1, kPnetFamily, Eth("NET_1", "eth0")), "only letters and digits");
  CheckInvalid(netlink::smcnl::BuildPnetAdd(1, kPnetFamily, PnetEntry{"N", "eth0", "mlx5_0", 1}), "both");
  CheckInvalid(netlink::smcnl::BuildPnetDel(1, kPnetFamily, ""), "is empty");
  CheckInvalid(netlink::smcnl::BuildUeidAdd(1, kGenFamily, "a b"), "only A-Z");
  CheckInvalid(netlink::smcnl::BuildUeidRemove(1, kGenFamily, std::string(33, 'A')), "longer than 32");
}

TEST_CASE("SMC user EID commands carry the EID padded with blanks to 32 bytes plus a NUL", "[smc]") {
  const std::string padded = "ERDMA-SMC" + std::string(23, ' ');
  // SMC_NLA_EID_TABLE_ENTRY (1): 4 + 33 = 37 bytes, padded to 40.
  Bytes add = Headers(60, kGenFamily, kCommand, 12, 10);  // SMC_NETLINK_ADD_UEID
  Append(add, AttrString(1, padded));
  CHECK(*netlink::smcnl::BuildUeidAdd(12, kGenFamily, "erdma-smc") == add);
  Bytes remove = Headers(60, kGenFamily, kCommand, 13, 11);  // SMC_NETLINK_REMOVE_UEID
  Append(remove, AttrString(1, padded));
  CHECK(*netlink::smcnl::BuildUeidRemove(13, kGenFamily, "ERDMA-SMC") == remove);
  CHECK(netlink::smcnl::BuildUeidDump(14, kGenFamily) == Headers(20, kGenFamily, kDump, 14, 9));
}

// --- answers ----------------------------------------------------------------

TEST_CASE("an SMC pnet dump message gives a netdev entry with the kernel's n/a side left empty", "[smc]") {
  auto e = netlink::smcnl::ParsePnetEntry(PnetMsg(4, "00163E10F8B0", "eth0", "", 0), kPnetFamily);
  REQUIRE(e.ok());
  CHECK(*e == Eth("00163E10F8B0", "eth0"));
  auto ib = netlink::smcnl::ParsePnetEntry(PnetMsg(4, "NET1", "", "erdma_0", 1), kPnetFamily);
  REQUIRE(ib.ok());
  CHECK(*ib == Ib("NET1", "erdma_0", 1));
}

TEST_CASE("an SMC pnet dump message needs all four attributes, the right family and command", "[smc]") {
  CheckMalformed(netlink::smcnl::ParsePnetEntry(PnetMsg(4, "NET1", "eth0", "", 0), kGenFamily));
  CheckMalformed(netlink::smcnl::ParsePnetEntry(
      GenlMsg(kPnetFamily, 2, NLM_F_MULTI, 4).Str(1, "NET1").Str(2, "eth0").Str(3, "n/a").U8(4, 255).bytes(),
      kPnetFamily));
  CheckMalformed(netlink::smcnl::ParsePnetEntry(
      GenlMsg(kPnetFamily, 1, NLM_F_MULTI, 4).Str(1, "NET1").Str(2, "eth0").Str(3, "n/a").bytes(),
      kPnetFamily));
  CheckMalformed(netlink::smcnl::ParsePnetEntry(
      GenlMsg(kPnetFamily, 1, NLM_F_MULTI, 4).Str(2, "eth0").Str(3, "n/a").U8(4, 255).bytes(), kPnetFamily));
  // A name without its NUL, a port of four bytes.
  CheckMalformed(netlink::smcnl::ParsePnetEntry(GenlMsg(kPnetFamily, 1, NLM_F_MULTI, 4)
                                                    .Raw(1, {'N', 'E', 'T'})
                                                    .Str(2, "eth0")
                                                    .Str(3, "n/a")
                                                    .U8(4, 255)
                                                    .bytes(),
                                                kPnetFamily));
  CheckMalformed(netlink::smcnl::ParsePnetEntry(
      GenlMsg(kPnetFamily, 1, NLM_F_MULTI, 4).Str(1, "NET1").Str(2, "eth0").Str(3, "n/a").U32(4, 255).bytes(),
      kPnetFamily));
  // Both sides "n/a".
  CheckMalformed(netlink::smcnl::ParsePnetEntry(PnetMsg(4, "NET1", "", "", 0), kPnetFamily));
}

TEST_CASE("an SMC user EID dump message gives the EID without its padding", "[smc]") {
  auto u = netlink::smcnl::ParseUeid(UeidMsg(5, "ERDMA-SMC" + std::string(23, ' ')), kGenFamily);
  REQUIRE(u.ok());
  CHECK(*u == "ERDMA-SMC");
  CheckMalformed(netlink::smcnl::ParseUeid(UeidMsg(5, "X"), kPnetFamily));
  CheckMalformed(netlink::smcnl::ParseUeid(GenlMsg(kGenFamily, 9, NLM_F_MULTI, 5).bytes(), kGenFamily));
}

TEST_CASE("an SMC pnet dump's messages each give one entry", "[smc]") {
  CHECK(*netlink::smcnl::ParsePnetEntry(PnetMsg(6, "NET1", "eth0", "", 0), kPnetFamily) ==
        Eth("NET1", "eth0"));
  CHECK(*netlink::smcnl::ParsePnetEntry(PnetMsg(6, "NET1", "", "erdma_0", 1), kPnetFamily) ==
        Ib("NET1", "erdma_0", 1));
}

TEST_CASE("every truncation of an SMC answer message is malformed, never a parse", "[smc]") {
  const Bytes pnet = PnetMsg(13, "00163E10F8B0", "eth0", "", 0);
  const Bytes ueid = UeidMsg(13, "ERDMA-SMC" + std::string(23, ' '));
  for (const Bytes* whole : {&pnet, &ueid}) {
    for (size_t n = 0; n < whole->size(); ++n) {
      // The header keeps claiming the whole length: the parser must see the shortfall.
      const std::span<const uint8_t> cut(whole->data(), n);
      INFO("first " << n << " of " << whole->size() << " bytes");
      if (whole == &pnet) CheckMalformed(netlink::smcnl::ParsePnetEntry(cut, kPnetFamily));
      if (whole == &ueid) CheckMalformed(netlink::smcnl::ParseUeid(cut, kGenFamily));
    }
  }
}

TEST_CASE("an SMC message at an odd address parses like an aligned one", "[smc]") {
  const Bytes msg = PnetMsg(14, "NET1", "veth0", "", 0);
  Bytes shifted(msg.size() + 1);
  std::memcpy(shifted.data() + 1, msg.data(), msg.size());
  auto e = netlink::smcnl::ParsePnetEntry(std::span<const uint8_t>(shifted).subspan(1), kPnetFamily);
  REQUIRE(e.ok());
  CHECK(*e == Eth("NET1", "veth0"));
}

TEST_CASE("random bytes never crash the SMC parsers", "[smc]") {
  std::mt19937 rng(20240603);
  std::uniform_int_distribution<int> byte(0, 255);
  const Bytes seeds[] = {PnetMsg(15, "NET1", "eth0", "", 0), UeidMsg(15, "ERDMA"),
                         ErrorMsg(15, EINVAL, "bad", kPnetFamily)};
  for (int round = 0; round < 4000; ++round) {
    Bytes b = seeds[round % 3];
    // Flip a few bytes past the length field, so that most rounds get deep.
    for (int k = 0; k < 1 + round % 5; ++k) b[4 + size_t(byte(rng)) % (b.size() - 4)] = uint8_t(byte(rng));
    if (round % 7 == 0) b.resize(size_t(byte(rng)) % (b.size() + 1));
    (void)netlink::smcnl::ParsePnetEntry(b, kPnetFamily);
    (void)netlink::smcnl::ParseUeid(b, kGenFamily);
  }
  SUCCEED("no crash");
}

}  // namespace test_unit_smc_codec_test

// The macvlan, ipvlan and vf blocks (their drivers' options), the runtime MAC and GUID.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "cni/driver/child.h"
#include "cni/driver/registry.h"
#include "cni/driver/vf.h"
#include "conf/config.h"

namespace test_unit_modes_config_test {

namespace {

using base::Code;
using nlohmann::json;

base::Result<conf::Config> ParseWith(const char* patch) {
  json j = json::parse(R"({"cniVersion": "1.0.0", "name": "erdma", "type": "erdma-cni",
                           "device": {"name": "eth1"}})");
  j.merge_patch(json::parse(patch));
  return conf::Parse(cni::Modes(), j.dump());
}

const cni::MacvlanOptions& Macvlan(const conf::Config& c) {
  return conf::OptionsOf<cni::MacvlanOptions>(c.mode_options);
}
const cni::IpvlanOptions& Ipvlan(const conf::Config& c) {
  return conf::OptionsOf<cni::IpvlanOptions>(c.mode_options);
}
const cni::VfOptions& Vf(const conf::Config& c) { return conf::OptionsOf<cni::VfOptions>(c.mode_options); }

struct Bad {
  const char* patch;
  const char* prefix;  // code 7, message starting with this
};

const std::vector<Bad> kBad = {
    {R"({"mode": "bridge"})", "mode: \"bridge\" is not supported; use \"move\", \"macvlan\", \"ipvlan\""},
    {R"({"mode": "macvlan", "addresses": "inherit"})", "addresses: \"inherit\" would copy the parent's"},
    {R"({"mode": "ipvlan", "addresses": "inherit"})", "addresses: \"inherit\" would copy the parent's"},
    {R"({"macvlan": {"mode": "bridge"}})", "macvlan: only mode \"macvlan\" reads it, and mode is \"move\""},
    {R"({"mode": "macvlan", "ipvlan": {}})", "ipvlan: only mode \"ipvlan\" reads it"},
    {R"({"mode": "move", "vf": {}})", "vf: only mode \"vf\" reads it"},
    {R"({"mode": "macvlan", "macvlan": []})", "macvlan: must be an object"},
    {R"({"mode": "macvlan", "macvlan": {"mode": "vxlan"}})", "macvlan.mode: \"vxlan\" is not a macvlan mode"},
    {R"({"mode": "macvlan", "macvlan": {"mode": 4}})", "macvlan.mode: must be a string"},
    {R"({"mode": "macvlan", "macvlan": {"mac": "02:00:00:00:00"}})",
     "macvlan.mac: must be a unicast MAC address"},
    {R"({"mode": "macvlan", "macvlan": {"mac": "03:00:00:00:00:01"}})", "macvlan.mac: must be a unicast MAC"},
    {R"({"mode": "macvlan", "macvlan": {"mode": "passthru", "mac": "02:00:00:00:00:01"}})",
     "macvlan.mac: a passthru macvlan takes its parent's MAC"},
    {R"({"mode": "macvlan", "macvlan": {"mode": "passthru"}, "runtimeConfig": {"mac": "02:00:00:00:00:01"}})",
     "runtimeConfig.mac: a passthru macvlan takes its parent's MAC"},
    {R"({"mode": "macvlan", "macvlan": {"mode": "source"}})", "macvlan.sourceMacs: mode \"source\" receives"},
    {R"({"mode": "macvlan", "macvlan": {"sourceMacs": ["02:00:00:00:00:01"]}})",
     "macvlan.sourceMacs: only mode \"source\" uses it"},
    {R"({"mode": "macvlan", "macvlan": {"mode": "source", "sourceMacs": ["x"]}})",
     "macvlan.sourceMacs: every entry must be a MAC address"},
    {R"({"mode": "ipvlan", "ipvlan": {"mode": "l4"}})", "ipvlan.mode: \"l4\" is not an ipvlan mode"},
    {R"({"mode": "ipvlan", "ipvlan": {"mac": "02:00:00:00:00:01"}})", "ipvlan.mac: ipvlan children share"},
    {R"({"mode": "ipvlan", "runtimeConfig": {"mac": "02:00:00:00:00:01"}})",
     "runtimeConfig.mac: mode \"ipvlan\" children share their parent's MAC"},
    {R"({"runtimeConfig": {"mac": "02:00:00:00:00:01"}})", "runtimeConfig.mac: mode \"move\" keeps"},
    {R"({"args": {"cni": {"mac": "02:00:00:00:00:01"}}})", "args.cni.mac: mode \"move\" keeps"},
    {R"({"mode": "macvlan", "runtimeConfig": {"mac": "zz"}})",
     "runtimeConfig.mac: must be a unicast MAC address"},
    {R"({"mode": "vf", "vf": {"vlan": 4095}})", "vf.vlan: must be an integer 0..4094"},
    {R"({"mode": "vf", "vf": {"vlanQoS": 3}})", "vf.vlanQoS: needs vf.vlan"},
    {R"({"mode": "vf", "vf": {"vlan": 10, "vlanQoS": 8}})", "vf.vlanQoS: must be an integer 0..7"},
    {R"({"mode": "vf", "vf": {"minTxRate": 200, "maxTxRate": 100}})", "vf.minTxRate: must not exceed"},
    {R"({"mode": "vf", "vf": {"spoofchk": "yes"}})", "vf.spoofchk: must be true or false"},
    {R"({"mode": "vf", "vf": {"linkState": "up"}})", "vf.linkState: \"up\" is not supported"},
    {R"({"mode": "vf", "vf": {"infinibandGUID": "00:11:22:33:44:55:66"}})",
     "vf.infinibandGUID: must be a GUID"},
    {R"({"mode": "vf", "vf": {"mac": "02-00-00-00-00-01"}})", "vf.mac: must be a unicast MAC address"},
    {R"({"runtimeConfig": {"infinibandGUID": "00:11:22:33:44:55:66:77"}})",
     "runtimeConfig.infinibandGUID: only mode \"vf\" sets a GUID"},
};

}  // namespace

TEST_CASE("mode options: every bad value is code 7 with a message naming the key and the fix") {
  for (const auto& b : kBad) {
    INFO(b.patch);
    auto c = ParseWith(b.patch);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().code == Code::kInvalidConfig);
    CHECK_THAT(c.error().msg, Catch::StartsWith(b.prefix));
  }
}

TEST_CASE("mode options: macvlan defaults to bridge, takes IPAM's addresses, and no IPAM means none") {
  auto c = ParseWith(R"({"mode": "macvlan"})");
  REQUIRE(c.ok());
  CHECK(c->mode == &cni::kMacvlanMode);
  CHECK(c->child());
  CHECK(Macvlan(*c).mode == cni::MacvlanMode::kBridge);
  CHECK(c->addresses == conf::AddressMode::kNone);
  auto i = ParseWith(R"({"mode": "macvlan", "ipam": {"type": "host-local"}})");
  REQUIRE(i.ok());
  CHECK(i->addresses == conf::AddressMode::kIpam);
}

TEST_CASE("mode options: the runtime's mac wins over args.cni and the config") {
  auto c = ParseWith(R"({"mode": "macvlan", "macvlan": {"mac": "02:00:00:00:00:01"},
                         "args": {"cni": {"mac": "02:00:00:00:00:02"}},
                         "runtimeConfig": {"mac": "02:00:00:00:00:0A"}})");
  REQUIRE(c.ok());
  CHECK(c->mac == "02:00:00:00:00:0a");
  auto a = ParseWith(R"({"mode": "macvlan", "macvlan": {"mac": "02:00:00:00:00:01"},
                         "args": {"cni": {"mac": "02:00:00:00:00:02"}}})");
  REQUIRE(a.ok());
  CHECK(a->mac == "02:00:00:00:00:02");
}

TEST_CASE("mode options: every macvlan and ipvlan mode maps to the kernel's number") {
  using M = cni::MacvlanMode;
  for (auto [name, mode, num] :
       {std::tuple{"private", M::kPrivate, 1u}, std::tuple{"vepa", M::kVepa, 2u},
        std::tuple{"bridge", M::kBridge, 4u}, std::tuple{"passthru", M::kPassthru, 8u}}) {
    auto c = ParseWith((R"({"mode": "macvlan", "macvlan": {"mode": ")" + std::string(name) + "\"}}").c_str());
    REQUIRE(c.ok());
    CHECK(Macvlan(*c).mode == mode);
    CHECK(static_cast<uint32_t>(Macvlan(*c).mode) == num);
    CHECK(std::string(cni::MacvlanModeName(mode)) == name);
  }
  auto s =
      ParseWith(R"({"mode": "macvlan", "macvlan": {"mode": "source", "sourceMacs": ["02:00:00:00:00:0B"]}})");
  REQUIRE(s.ok());
  CHECK(Macvlan(*s).source_macs == std::vector<std::string>{"02:00:00:00:00:0b"});
  for (auto [name, num] : {std::pair{"l2", 0}, std::pair{"l3", 1}, std::pair{"l3s", 2}}) {
    auto c = ParseWith((R"({"mode": "ipvlan", "ipvlan": {"mode": ")" + std::string(name) + "\"}}").c_str());
    REQUIRE(c.ok());
    CHECK(static_cast<int>(Ipvlan(*c).mode) == num);
  }
}

TEST_CASE("mode options: vf settings are read and the GUID normalised") {
  auto c = ParseWith(R"({"mode": "vf", "vf": {"mac": "02:00:00:00:00:0C", "vlan": 100, "vlanQoS": 3,
                         "spoofchk": false, "trust": true, "linkState": "enable", "minTxRate": 10,
                         "maxTxRate": 1000}, "runtimeConfig": {"infinibandGUID": "00:11:22:33:44:55:66:AA"}})");
  REQUIRE(c.ok());
  CHECK(c->mode == &cni::kVfMode);
  CHECK(c->mac == "02:00:00:00:00:0c");
  CHECK(Vf(*c).vlan == 100u);
  CHECK(Vf(*c).vlan_qos == 3u);
  CHECK(Vf(*c).spoofchk == false);
  CHECK(Vf(*c).trust == true);
  CHECK(Vf(*c).link_state == cni::VfOptions::LinkState::kEnable);
  CHECK(Vf(*c).min_tx_rate == 10u);
  CHECK(Vf(*c).max_tx_rate == 1000u);
  CHECK(Vf(*c).ib_guid == "00:11:22:33:44:55:66:aa");
  CHECK(Vf(*c).any());
}

namespace {

// Parse, then the pod's requests (CNI_ARGS given as pairs); the config itself is left as parsed.
base::Result<conf::PodRequests> WithRequests(const char* patch,
                                             const std::map<std::string, std::string>& args) {
  ASSIGN_OR_RETURN(const conf::Config c, ParseWith(patch));
  ASSIGN_OR_RETURN(conf::PodRequests r, conf::ReadPodRequests(c, args));
  return r;
}

}  // namespace

TEST_CASE(
    "runtime requests: CNI_ARGS MAC is honoured by macvlan and vf, refused by move and ipvlan naming the "
    "mode") {
  const std::map<std::string, std::string> mac{{"MAC", "02:AA:00:00:00:07"}};
  for (const char* patch : {R"({"mode": "macvlan"})", R"({"mode": "vf"})"}) {
    INFO(patch);
    auto c = WithRequests(patch, mac);
    REQUIRE(c.ok());
    CHECK(c->mac == "02:aa:00:00:00:07");
  }
  for (const auto& [patch, says] : std::vector<std::pair<const char*, const char*>>{
           {R"({"mode": "move"})", "CNI_ARGS MAC: mode \"move\" keeps the device's own MAC"},
           {R"({"mode": "ipvlan"})", "CNI_ARGS MAC: mode \"ipvlan\" children share their parent's MAC"},
           {R"({"mode": "macvlan", "macvlan": {"mode": "passthru"}})", "CNI_ARGS MAC: a passthru macvlan"}}) {
    INFO(patch);
    auto c = WithRequests(patch, mac);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().code == Code::kInvalidConfig);
    CHECK_THAT(c.error().msg, Catch::StartsWith(says));
  }
  auto bad = WithRequests(R"({"mode": "macvlan"})", {{"MAC", "03:00:00:00:00:01"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().msg, Catch::StartsWith("CNI_ARGS MAC: must be a unicast MAC"));
  // runtimeConfig.mac (the capability) wins over CNI_ARGS, which wins over the config's.
  auto rc = WithRequests(R"({"mode": "macvlan", "runtimeConfig": {"mac": "02:00:00:00:00:0a"}})", mac);
  REQUIRE(rc.ok());
  CHECK(rc->mac == "02:00:00:00:00:0a");
  auto cfg = WithRequests(R"({"mode": "macvlan", "macvlan": {"mac": "02:00:00:00:00:0b"}})", mac);
  REQUIRE(cfg.ok());
  CHECK(cfg->mac == "02:aa:00:00:00:07");
  // Chained, CNI_ARGS belong to the primary plugin: ignored, even in move mode.
  auto chained = WithRequests(R"({"prevResult": {"cniVersion": "1.0.0"}})",
                              {{"MAC", "02:00:00:00:00:01"}, {"IP", "10.0.0.9"}});
  REQUIRE(chained.ok());
  CHECK_FALSE(chained->mac);
  CHECK(chained->ips.empty());
}

TEST_CASE(
    "runtime requests: CNI_ARGS IP and runtimeConfig.ips are read for IPAM and inherit, refused without "
    "addresses") {
  auto ip = WithRequests(R"({})", {{"IP", "10.9.0.7,fd00::7"}});
  REQUIRE(ip.ok());
  REQUIRE(ip->ips.size() == 2);
  CHECK(ip->ips[0].ip.ToString() == "10.9.0.7/32");
  CHECK_FALSE(ip->ips[0].exact);
  CHECK(ip->ips_key == "CNI_ARGS IP");
  auto rc = WithRequests(R"({"runtimeConfig": {"ips": ["10.9.0.7/24"]}})", {{"IP", "10.9.0.8"}});
  REQUIRE(rc.ok());
  REQUIRE(rc->ips.size() == 1);
  CHECK(rc->ips[0].ip.ToString() == "10.9.0.7/24");
  CHECK(rc->ips[0].exact);
  CHECK(rc->ips_key == "runtimeConfig.ips");
  auto none = WithRequests(R"({"addresses": "none"})", {{"IP", "10.9.0.7"}});
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().msg, Catch::StartsWith("CNI_ARGS IP: addresses is \"none\""));
  auto junk = WithRequests(R"({"runtimeConfig": {"ips": ["ten"]}})", {});
  REQUIRE_FALSE(junk.ok());
  CHECK_THAT(junk.error().msg, Catch::StartsWith("runtimeConfig.ips: \"ten\" is not an IP address"));
}

}  // namespace test_unit_modes_config_test

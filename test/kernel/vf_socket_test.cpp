// netlink::OpenVf against the real kernel. There is no SR-IOV hardware here,
// so what can be proven is that the kernel takes the messages: the VF list
// request is answered (empty for a veth, which has no parent device), and
// each VF setting gets as far as do_setvfinfo, whose answer for a driver
// without the ndo is EOPNOTSUPP, not the EINVAL or ERANGE that a malformed
// nest or a short struct would draw from the attribute policy. The VF
// values themselves are checked by the VM scenario and the codec tests.
#include "netlink/vf_socket.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <memory>
#include <string>

#include "netlink/netns.h"
#include "netlink/raw_message.h"
#include "netlink/transport.h"
#include "netlink/vf_kernel.h"
#include "test/kernel/require_ok.h"
#include "test/kernel/scratch_netns.h"

namespace test_kernel_vf_socket_test {

namespace {

using netlink::VfSettings;
using rt_test::ScratchNetns;

struct VethNs {
  ScratchNetns ns;
  int index = 0;
  std::unique_ptr<netlink::Vf> vf;
  VethNs() {
    ns.Ip("link add v0 type veth peer name v1");
    auto links = ns.Json("link show v0");
    REQUIRE(links.size() == 1);
    index = links[0]["ifindex"].get<int>();
    auto handle = netlink::Netns::Open(ns.path(), "test netns");
    REQUIRE_OK(handle);
    auto opened = netlink::OpenVf(*handle);
    REQUIRE_OK(opened);
    vf = std::move(opened).value();
  }
};

}  // namespace

TEST_CASE("the VF list of a link without VFs is empty, and of a missing link ENODEV", "[vf]") {
  VethNs v;
  auto list = v.vf->List(v.index);
  REQUIRE_OK(list);
  CHECK(list->empty());
  auto lo = v.vf->List(1);
  REQUIRE_OK(lo);
  CHECK(lo->empty());
  auto missing = v.vf->List(999999);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().sys_errno == ENODEV);
}

TEST_CASE("every VF setting reaches the driver, which for a veth is EOPNOTSUPP", "[vf]") {
  VethNs v;
  std::vector<std::pair<std::string, VfSettings>> cases;
  auto add = [&](const std::string& what, auto set) {
    VfSettings s;
    s.vf = 0;
    set(s);
    cases.emplace_back(what, s);
  };
  add("mac", [](VfSettings& s) { s.mac = "02:00:00:00:00:01"; });
  add("vlan", [](VfSettings& s) { s.vlan = netlink::VfVlan{100, 3}; });
  add("rate", [](VfSettings& s) { s.rate = netlink::VfRate{0, 1000}; });
  add("spoofchk", [](VfSettings& s) { s.spoofchk = false; });
  add("trust", [](VfSettings& s) { s.trust = true; });
  add("link state", [](VfSettings& s) { s.link_state = netlink::kVfLinkStateDisable; });
  add("node GUID", [](VfSettings& s) { s.node_guid = "00:11:22:33:44:55:66:77"; });
  add("port GUID", [](VfSettings& s) { s.port_guid = "00:11:22:33:44:55:66:77"; });
  add("all", [](VfSettings& s) {
    s.mac = "02:00:00:00:00:01";
    s.vlan = netlink::VfVlan{100, 3};
    s.rate = netlink::VfRate{0, 1000};
    s.spoofchk = true;
    s.trust = false;
    s.link_state = netlink::kVfLinkStateAuto;
    s.node_guid = s.port_guid = "00:11:22:33:44:55:66:77";
  });
  for (const auto& [what, s] : cases) {
    INFO(what);
    auto r = v.vf->Set(v.index, s);
    REQUIRE_FALSE(r.ok());
    INFO(r.error().msg << " | " << r.error().details);
    CHECK(r.error().sys_errno == EOPNOTSUPP);
    CHECK(r.error().msg.find("RTM_NEWLINK dev " + std::to_string(v.index)) != std::string::npos);
  }
  // Nothing about the link changed.
  auto links = v.ns.Json("link show v0");
  CHECK(links[0]["ifname"] == "v0");
}

TEST_CASE("VF settings for a missing link are ENODEV", "[vf]") {
  VethNs v;
  VfSettings s;
  s.vlan = netlink::VfVlan{1, 0};
  auto r = v.vf->Set(999999, s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().sys_errno == ENODEV);
}

TEST_CASE("the kernel checks VF struct sizes, so EOPNOTSUPP above means ours passed", "[vf]") {
  // The control: IFLA_VF_VLAN four bytes short of struct ifla_vf_vlan.
  VethNs v;
  auto handle = netlink::Netns::Open(v.ns.path(), "test netns");
  REQUIRE_OK(handle);
  auto sock = netlink::Socket::Open(*handle, NETLINK_ROUTE, "test socket");
  REQUIRE_OK(sock);
  auto r = sock->Command("short IFLA_VF_VLAN", [&](uint32_t seq) -> base::Result<netlink::raw::Bytes> {
    netlink::raw::Request req(RTM_NEWLINK, netlink::raw::kCommand, seq);
    auto* ifi = static_cast<ifinfomsg*>(req.PutExtraHeader(sizeof(ifinfomsg)));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = v.index;
    nlattr* list = req.BeginNest(IFLA_VFINFO_LIST);
    nlattr* info = req.BeginNest(IFLA_VF_INFO);
    const uint32_t short_vlan[2] = {0, 100};
    req.PutBytes(IFLA_VF_VLAN, short_vlan, sizeof short_vlan);
    req.EndNest(info);
    req.EndNest(list);
    return std::move(req).Finish();
  });
  REQUIRE_FALSE(r.ok());
  INFO(r.error().msg << " | " << r.error().details);
  CHECK(r.error().sys_errno != EOPNOTSUPP);
  CHECK((r.error().sys_errno == EINVAL || r.error().sys_errno == ERANGE));
}

}  // namespace test_kernel_vf_socket_test

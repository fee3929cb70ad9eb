// The state file's format, frozen: a state with every kind of step, each
// optional member present in one place and absent in another, and strings
// that need escaping, written by StateText and compared with the text an
// erdma-cni of the same format (1) wrote. A state file outlives the binary
// that wrote it (an upgrade with pods running), so a change here is a format
// change: bump AttachmentState::kFormat and read the old one.
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cni/state/state.h"

namespace test_unit_state_format_test {

namespace {

netlink::IpPrefix P(const char* s) { return *netlink::IpPrefix::Parse(s); }
netlink::IpAddress A(const char* s) { return *netlink::IpAddress::Parse(s); }

cni::AttachmentState Everything() {
  cni::AttachmentState st;
  st.network = "erdma \"quoted\" \\ net";
  st.container_id = "c0ffee";
  st.if_name = "net1";
  st.netns = "/run/netns/pod\t1";
  st.pod_if_name = "eth\u00e9";  // UTF-8: a 2-byte character
  st.table = 200;
  st.rdma_device = "erdma_0";
  st.rdma_mode = "exclusive";
  st.origin.name = "eth1";
  st.origin.index = 7;
  st.origin.mac = "00:16:3e:10:f8:b0";
  st.origin.mtu = 9000;
  st.origin.up = true;
  st.origin.kind = "";
  st.origin.addrs.push_back(
      {7, P("10.9.0.10/24"), netlink::kScopeUniverse, netlink::kAddrFlagNoPrefixRoute, A("10.9.0.255")});
  st.origin.addrs.push_back({7, P("fd00:9::10/64"), netlink::kScopeUniverse, 0, std::nullopt});
  netlink::RouteInfo via;
  via.dst = P("0.0.0.0/0");
  via.oif = 7;
  via.metric = 200;
  via.protocol = netlink::kProtoBoot;
  via.gateway = A("10.9.0.1");
  via.prefsrc = A("10.9.0.10");
  st.origin.routes.push_back(via);
  netlink::RouteInfo subnet;
  subnet.dst = P("10.9.0.0/24");
  subnet.oif = 7;
  subnet.table = 200;
  subnet.scope = netlink::kScopeLink;
  st.origin.routes.push_back(subnet);

  st.steps.push_back(
      cni::StepIpam{"host-local", {{"cniVersion", "1.0.0"}, {"ipam", {{"type", "host-local"}}}}});
  st.steps.push_back(cni::StepMove{"net1"});
  cni::StepChild child;
  child.parent = "eth1";
  child.spec = {
      "macvlan", 7, "net2", "02:00:00:00:00:02", 1500, 16, {"02:00:00:00:00:03", "02:00:00:00:00:04"}};
  st.steps.push_back(child);
  cni::StepChild bare;
  bare.parent = "eth2";
  bare.spec = {"ipvlan", 8, "net3", "", 0, 0, {}};
  st.steps.push_back(bare);
  st.steps.push_back(cni::StepMtu{1400});
  st.steps.push_back(cni::StepAddr{{0, P("10.9.0.150/24"), netlink::kScopeUniverse, 0, std::nullopt}});
  st.steps.push_back(cni::StepUp{});
  st.steps.push_back(cni::StepRoute{subnet});
  st.steps.push_back(cni::StepRoute{via});
  st.steps.push_back(cni::StepRule{{AF_INET, 200, P("10.9.0.150/32"), 200}});
  st.steps.push_back(cni::StepRule{{AF_INET6, 201, std::nullopt, 201}});
  st.steps.push_back(cni::StepRdmaMove{"erdma_0"});
  st.steps.push_back(cni::StepSoftRdma{"rxe_c0ffee_net1"});
  st.steps.push_back(cni::StepSysctl{"net.smc.wmem", "1048576", "65536\n"});
  st.steps.push_back(cni::StepPnet{{"00163E10F8B0", "net1", "", 0}});
  st.steps.push_back(cni::StepPnet{{"IBID", "", "mlx5_0", 1}});
  st.steps.push_back(cni::StepUeid{"ERDMA-SMC"});
  cni::StepVf vf;
  vf.pf = "ens1f0";
  vf.pf_index = 3;
  vf.pci = "0000:3b:00.2";
  vf.netdev = "";
  vf.netdev_mac = "52:54:00:aa:00:02";
  vf.applied.vf = vf.old.vf = 4;
  vf.applied.mac = "02:00:00:3b:00:02";
  vf.applied.vlan = netlink::VfVlan{100, 2};
  vf.applied.rate = netlink::VfRate{10, 1000};
  vf.applied.spoofchk = false;
  vf.applied.trust = true;
  vf.applied.link_state = 2;
  vf.applied.node_guid = vf.applied.port_guid = "00:11:22:33:44:55:66:77";
  vf.old.vlan = netlink::VfVlan{0, 0};
  st.steps.push_back(vf);
  st.steps.push_back(cni::StepMac{"02:00:00:3b:00:02"});
  st.complete = true;
  st.result = {{"cniVersion", "1.1.0"},
               {"interfaces", {{{"name", "net1"}, {"sandbox", "/run/netns/pod\t1"}}}}};
  return st;
}

// Written by format 1's writer (nlohmann's dump, members in key order).
constexpr const char* kFormat1 = R"json(
{
 "complete": true,
 "containerID": "c0ffee",
 "device": {
  "addrs": [
   {
    "broadcast": "10.9.0.255",
    "flags": 512,
    "ifindex": 7,
    "local": "10.9.0.10/24",
    "scope": 0
   },
   {
    "flags": 0,
    "ifindex": 7,
    "local": "fd00:9::10/64",
    "scope": 0
   }
  ],
  "index": 7,
  "kind": "",
  "mac": "00:16:3e:10:f8:b0",
  "mtu": 9000,
  "name": "eth1",
  "routes": [
   {
    "dst": "0.0.0.0/0",
    "gateway": "10.9.0.1",
    "metric": 200,
    "oif": 7,
    "prefsrc": "10.9.0.10",
    "protocol": 3,
    "scope": 0,
    "table": 254,
    "type": 1
   },
   {
    "dst": "10.9.0.0/24",
    "metric": 0,
    "oif": 7,
    "protocol": 4,
    "scope": 253,
    "table": 200,
    "type": 1
   }
  ],
  "up": true
 },
 "format": 1,
 "ifName": "net1",
 "netns": "/run/netns/pod\t1",
 "network": "erdma \"quoted\" \\ net",
 "podIfName": "ethé",
 "rdmaDevice": "erdma_0",
 "rdmaMode": "exclusive",
 "result": {
  "cniVersion": "1.1.0",
  "interfaces": [
   {
    "name": "net1",
    "sandbox": "/run/netns/pod\t1"
   }
  ]
 },
 "steps": [
  {
   "config": {
    "cniVersion": "1.0.0",
    "ipam": {
     "type": "host-local"
    }
   },
   "op": "ipam",
   "type": "host-local"
  },
  {
   "name": "net1",
   "op": "move"
  },
  {
   "kind": "macvlan",
   "mac": "02:00:00:00:00:02",
   "mode": 16,
   "name": "net2",
   "op": "child",
   "parent": "eth1",
   "parentIndex": 7,
   "sourceMacs": [
    "02:00:00:00:00:03",
    "02:00:00:00:00:04"
   ]
  },
  {
   "kind": "ipvlan",
   "mac": "",
   "mode": 0,
   "name": "net3",
   "op": "child",
   "parent": "eth2",
   "parentIndex": 8,
   "sourceMacs": []
  },
  {
   "mtu": 1400,
   "op": "mtu"
  },
  {
   "addr": {
    "flags": 0,
    "ifindex": 0,
    "local": "10.9.0.150/24",
    "scope": 0
   },
   "op": "addr"
  },
  {
   "op": "up"
  },
  {
   "op": "route",
   "route": {
    "dst": "10.9.0.0/24",
    "metric": 0,
    "oif": 7,
    "protocol": 4,
    "scope": 253,
    "table": 200,
    "type": 1
   }
  },
  {
   "op": "route",
   "route": {
    "dst": "0.0.0.0/0",
    "gateway": "10.9.0.1",
    "metric": 200,
    "oif": 7,
    "prefsrc": "10.9.0.10",
    "protocol": 3,
    "scope": 0,
    "table": 254,
    "type": 1
   }
  },
  {
   "op": "rule",
   "rule": {
    "family": 4,
    "priority": 200,
    "src": "10.9.0.150/32",
    "table": 200
   }
  },
  {
   "op": "rule",
   "rule": {
    "family": 6,
    "priority": 201,
    "table": 201
   }
  },
  {
   "device": "erdma_0",
   "op": "rdma-move"
  },
  {
   "device": "rxe_c0ffee_net1",
   "op": "rdma-soft"
  },
  {
   "name": "net.smc.wmem",
   "old": "65536\n",
   "op": "sysctl",
   "value": "1048576"
  },
  {
   "eth": "net1",
   "ib": "",
   "ibPort": 0,
   "op": "pnet",
   "pnetId": "00163E10F8B0"
  },
  {
   "eth": "",
   "ib": "mlx5_0",
   "ibPort": 1,
   "op": "pnet",
   "pnetId": "IBID"
  },
  {
   "op": "ueid",
   "ueid": "ERDMA-SMC"
  },
  {
   "applied": {
    "linkState": 2,
    "mac": "02:00:00:3b:00:02",
    "maxTxRate": 1000,
    "minTxRate": 10,
    "nodeGuid": "00:11:22:33:44:55:66:77",
    "portGuid": "00:11:22:33:44:55:66:77",
    "qos": 2,
    "spoofchk": false,
    "trust": true,
    "vf": 4,
    "vlan": 100
   },
   "netdev": "",
   "netdevMac": "52:54:00:aa:00:02",
   "old": {
    "qos": 0,
    "vf": 4,
    "vlan": 0
   },
   "op": "vf",
   "pci": "0000:3b:00.2",
   "pf": "ens1f0",
   "pfIndex": 3
  },
  {
   "mac": "02:00:00:3b:00:02",
   "op": "mac"
  }
 ],
 "table": 200
}
)json";

}  // namespace

TEST_CASE("the state file keeps format 1: every step, optional member and escape", "[state]") {
  const cni::AttachmentState st = Everything();
  if (std::getenv("ERDMA_PRINT_STATE_FORMAT")) std::cout << cni::StateText(st) << "\n";
  const nlohmann::json written = nlohmann::json::parse(cni::StateText(st));
  const nlohmann::json golden = nlohmann::json::parse(kFormat1);
  INFO("written: " << written.dump());
  CHECK(written == golden);
  // And it reads back into the same state.
  auto back = cni::StateFromJson(written);
  REQUIRE(back.ok());
  CHECK(cni::StateText(*back) == cni::StateText(st));
}

TEST_CASE(
    "the pod netns identity is an optional member of format 1: absent in older states, kept when present",
    "[state]") {
  // An older erdma-cni's state (the golden one) has none: "unknown".
  auto old = cni::StateFromJson(nlohmann::json::parse(kFormat1));
  REQUIRE(old.ok());
  CHECK_FALSE(old->netns_id.has_value());

  cni::AttachmentState st = Everything();
  st.netns_id = netlink::NetnsId{4, 4026532281, 4097};
  nlohmann::json written = nlohmann::json::parse(cni::StateText(st));
  nlohmann::json golden = nlohmann::json::parse(kFormat1);
  golden["netnsId"] = {{"dev", 4u}, {"ino", 4026532281u}, {"cookie", 4097u}};
  CHECK(written == golden);
  auto back = cni::StateFromJson(written);
  REQUIRE(back.ok());
  REQUIRE(back->netns_id.has_value());
  CHECK(*back->netns_id == netlink::NetnsId{4, 4026532281, 4097});
  // The cookie is optional within it (a kernel before 5.14 has none).
  golden["netnsId"].erase("cookie");
  auto no_cookie = cni::StateFromJson(golden);
  REQUIRE(no_cookie.ok());
  CHECK(no_cookie->netns_id == netlink::NetnsId{4, 4026532281, 0});

  // Bad ones are refused like any other member.
  for (const nlohmann::json& bad :
       {nlohmann::json("4:4026532281"), nlohmann::json{{"dev", 4}}, nlohmann::json{{"dev", 4}, {"ino", -1}},
        nlohmann::json{{"dev", 4}, {"ino", 0}}}) {
    INFO(bad.dump());
    nlohmann::json j = golden;
    j["netnsId"] = bad;
    CHECK_FALSE(cni::StateFromJson(j).ok());
  }
}

TEST_CASE("the state text is written without a tree: each key once, the JSON of the golden state",
          "[state]") {
  cni::AttachmentState st = Everything();
  st.netns_id = netlink::NetnsId{4, 4026532281, 4097};
  const std::string text = cni::StateText(st);
  // Every object's keys, as the parser meets them: a key written twice would
  // parse (the last one wins) and so pass the golden comparison above.
  std::vector<std::set<std::string>> open;
  std::vector<std::string> twice;
  auto seen = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) open.emplace_back();
    if (event == E::object_end) open.pop_back();
    if (event == E::key && !open.back().insert(parsed.get<std::string>()).second)
      twice.push_back(parsed.get<std::string>());
    return true;
  };
  const nlohmann::json parsed = nlohmann::json::parse(text, seen);
  CHECK(twice.empty());
  // The same JSON the records' tree gave when the golden text was written.
  nlohmann::json golden = nlohmann::json::parse(kFormat1);
  golden["netnsId"] = {{"dev", 4u}, {"ino", 4026532281u}, {"cookie", 4097u}};
  CHECK(parsed == golden);
  // A string that is not UTF-8 is refused as nlohmann refuses it.
  st.netns = "/run/netns/\xff";
  CHECK_THROWS_AS(cni::StateText(st), nlohmann::json::type_error);
}

}  // namespace test_unit_state_format_test

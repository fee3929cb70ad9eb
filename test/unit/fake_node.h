// The fixture the fake-node tests share: a fake node with one ENI stand-in
// (eth1) and a pod, a fake IPAM, and the CNI commands run against them.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "base/file.h"
#include "cni/command/add.h"
#include "cni/command/check.h"
#include "cni/command/del.h"
#include "cni/command/gc_status.h"
#include "cni/core/context.h"
#include "cni/driver/registry.h"
#include "cni/state/state.h"
#include "test/fake/fake_kernel.h"
#include "test/fake/fake_opener.h"
#include "test/fake/fake_rdma.h"
#include "test/fake/fake_smc.h"
#include "test/fake/fake_sysctl.h"
#include "test/fake/fake_vf.h"

namespace fakenode {

using netlink::IpAddress;
using netlink::IpPrefix;
using nlohmann::json;

inline IpPrefix P(const char* s) { return *IpPrefix::Parse(s); }
inline IpAddress A(const char* s) { return *IpAddress::Parse(s); }

using fake::FakeOpener;

class FakeIpam : public ipam::Executor {
 public:
  std::vector<std::string> calls;
  int fail_add = 0;
  int fail_del = 0;      ///< DELs still to fail
  bool missing = false;  ///< the plugin is not on CNI_PATH: every command fails, having changed nothing
  base::Result<json> Run(const std::string& type, const std::string& command, const std::string&) override {
    calls.push_back(type + " " + command);
    if (missing)
      return base::Error(base::Code::kIpam, "ipam.type: plugin \"" + type + "\" not found in CNI_PATH", "",
                         ENOENT)
          .ChangedNothing();
    if (command == "ADD" && fail_add) return base::Error(base::Code::kIpam, "ipam exhausted");
    if (command == "DEL" && fail_del > 0) {
      --fail_del;
      return base::Error(base::Code::kIpam, "ipam store unreachable");
    }
    if (command == "ADD") {
      ++leases;
      return json{{"cniVersion", "1.0.0"},
                  {"ips", json::array({{{"address", "10.9.0.150/24"}, {"gateway", "10.9.0.1"}}})}};
    }
    if (command == "DEL" && leases > 0) --leases;
    return json();
  }
  int leases = 0;
};

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/erdma-engine-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A node with one ENI stand-in (eth1) as a node agent leaves it, and a pod.
struct Node {
  fake::World world;
  int pod_ns;
  int eth1;
  FakeOpener opener{world};
  FakeIpam ipam;
  TempDir dir;
  std::string sysfs_root = dir.path + "/nosys";  ///< tests that need sysfs lay out a tree and point here
  std::unique_ptr<netlink::Kernel> host = world.Kernel(fake::World::kRoot);

  Node() {
    pod_ns = world.AddNetns("pod");
    opener.Map("/run/netns/pod", pod_ns);
    world.AddLink(pod_ns, {0, "lo", "", 65536, true, ""});
    eth1 = AddEni("eth1", "00:16:3e:10:f8:b0", "10.9.0.10/24", 200, /*append_default=*/false);
    world.ClearCalls();
  }

  /// A node ENI stand-in as the node agent leaves it: up, `addr` without a
  /// prefix route, the subnet at `subnet_metric` and a default via 10.9.0.1
  /// at metric 200, added or (`append_default`) appended next to another's.
  int AddEni(const std::string& name, const std::string& mac, const std::string& addr, uint32_t subnet_metric,
             bool append_default) {
    const int index = world.AddLink(fake::World::kRoot, {0, name, mac, 1500, true, ""});
    REQUIRE(
        host->AddAddr({index, P(addr.c_str()), netlink::kScopeUniverse, netlink::kAddrFlagNoPrefixRoute, {}})
            .ok());
    netlink::RouteInfo subnet;
    subnet.dst = P("10.9.0.0/24");
    subnet.oif = index;
    subnet.metric = subnet_metric;
    subnet.scope = netlink::kScopeLink;
    subnet.protocol = netlink::kProtoBoot;
    REQUIRE(host->AddRoute(subnet).ok());
    netlink::RouteInfo def;
    def.dst = P("0.0.0.0/0");
    def.gateway = A("10.9.0.1");
    def.oif = index;
    def.metric = 200;
    def.protocol = netlink::kProtoBoot;
    REQUIRE((append_default ? host->AppendRoute(def) : host->AddRoute(def)).ok());
    return index;
  }

  conf::Config Config(const std::string& extra = "") {
    std::string text =
        R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"eth1"},"dataDir":")" +
        dir.path + "\"" + extra + "}";
    auto cfg = conf::Parse(cni::Modes(), text);
    REQUIRE(cfg.ok());
    return *cfg;
  }

  cni::Env MakeEnv(cni::Command cmd, const std::string& cid = "c1",
                   const std::string& netns = "/run/netns/pod") {
    cni::Env e;
    e.command = cmd;
    e.container_id = cid;
    e.netns = netns;
    e.ifname = "net1";
    return e;
  }

  base::Result<json> Add(const conf::Config& cfg, const cni::Env& env) {
    cni::Context ctx{cfg, env, *host, opener, ipam};
    ctx.sysfs_root = sysfs_root;
    ctx.lock_wait_ms = 100;
    return cni::Add(ctx);
  }
  base::Status Del(const conf::Config& cfg, const cni::Env& env) {
    cni::Context ctx{cfg, env, *host, opener, ipam};
    ctx.sysfs_root = sysfs_root;
    ctx.lock_wait_ms = 100;
    return cni::Del(ctx);
  }
  base::Status Check(const conf::Config& cfg, const cni::Env& env) {
    cni::Context ctx{cfg, env, *host, opener, ipam};
    ctx.sysfs_root = sysfs_root;
    return cni::Check(ctx);
  }

  std::vector<std::string> StateFiles() {
    std::vector<std::string> out;
    for (const char* sub : {"/erdma", "/devices"}) {
      auto f = base::ListFiles(dir.path + sub);
      if (f.ok())
        for (auto& n : *f) out.push_back(std::string(sub) + "/" + n);
    }
    return out;
  }
};

inline bool HasRoute(fake::World& w, int ns, const char* dst, uint32_t table, uint32_t metric) {
  auto k = w.Kernel(ns);
  auto routes = k->ListRoutes(0);
  REQUIRE(routes.ok());
  for (const auto& r : *routes)
    if (r.dst == P(dst) && r.table == table && r.metric == metric) return true;
  return false;
}

}  // namespace fakenode

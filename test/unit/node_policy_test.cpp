// The node file's policy: what a config may name outside its attachment
// (dataDir, logFile) and which node devices move mode may take.
#include <catch2/catch.hpp>
#include <string>

#include "cni/driver/registry.h"
#include "conf/node.h"
#include "test/unit/fake_node.h"

namespace test_unit_node_policy_test {

namespace {

using base::Code;
using conf::NodePolicy;

conf::Config Parsed(const std::string& extra) {
  auto c = conf::Parse(
      cni::Modes(),
      R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni","device":{"name":"eth1"})" + extra + "}");
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("the built-in node policy allows what the shipped configs use and nothing else") {
  const NodePolicy p;
  CHECK(conf::CheckNodePaths(Parsed(""), p).ok());
  CHECK(conf::CheckNodePaths(Parsed(R"(,"dataDir":"/run/erdma-cni/","logFile":"/var/log/erdma-cni.log")"), p)
            .ok());
  CHECK(conf::CheckNodePaths(Parsed(R"(,"logFile":"/var/log/erdma-cni/a.log")"), p).ok());
  for (const char* bad :
       {R"(,"dataDir":"/")", R"(,"dataDir":"/run/erdma-cni/x")", R"(,"dataDir":"/etc")",
        R"(,"logFile":"/var/log/syslog")", R"(,"logFile":"/etc/passwd")",
        R"(,"logFile":"/proc/self/cwd/var/log/erdma-cni.log")", R"(,"logFile":"/var/log/erdma-cni")"}) {
    INFO(bad);
    auto s = conf::CheckNodePaths(Parsed(bad), p);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Code::kInvalidConfig);
  }
}

TEST_CASE("a refused path names the key, the value, the node file and the key the admin would add it to") {
  auto p = conf::ParseNodePolicy(R"({"dataDirs":["/var/lib/erdma/"]})", "/etc/erdma-cni/node.json");
  REQUIRE(p.ok());
  auto s = conf::CheckNodePaths(Parsed(R"(,"dataDir":"/var/lib/other")"), *p);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().msg.starts_with(
      "dataDir: \"/var/lib/other\" is not allowed on this node (/etc/erdma-cni/node.json)"));
  CHECK(s.error().msg.find("adding it to dataDirs") != std::string::npos);
  auto l = conf::CheckNodePaths(Parsed(R"(,"dataDir":"/var/lib/erdma/a","logFile":"/tmp/x.log")"), *p);
  REQUIRE_FALSE(l.ok());
  CHECK(l.error().msg.starts_with("logFile: \"/tmp/x.log\""));
  CHECK(l.error().msg.find("logFiles") != std::string::npos);
}

TEST_CASE("a node path entry is exact, or with a trailing slash allows everything below but not itself") {
  const std::vector<std::string> e = {"/run/erdma-cni", "/srv/cni/"};
  CHECK(conf::PathAllowed(e, "/run/erdma-cni"));
  CHECK(conf::PathAllowed(e, "//run/./erdma-cni/"));
  CHECK_FALSE(conf::PathAllowed(e, "/run/erdma-cni/sub"));
  CHECK_FALSE(conf::PathAllowed(e, "/run/erdma-cni2"));
  CHECK(conf::PathAllowed(e, "/srv/cni/a"));
  CHECK(conf::PathAllowed(e, "/srv/cni/a/b"));
  CHECK_FALSE(conf::PathAllowed(e, "/srv/cni"));
  CHECK_FALSE(conf::PathAllowed(e, "/srv/cnix/a"));
  CHECK(conf::PathAllowed({"/"}, "/anything/at/all"));
  CHECK_FALSE(conf::PathAllowed({}, "/run/erdma-cni"));
}

TEST_CASE("the node file refuses unknown keys, wrong types, relative or dotted paths and garbage") {
  const std::string f = "/etc/erdma-cni/node.json";
  struct Row {
    const char* text;
    Code code;
    const char* words;
  };
  for (const Row& r : std::vector<Row>{
           {R"({"dataDir":["/x"]})", Code::kInvalidConfig, "unknown key \"dataDir\""},
           {R"({"dataDirs":"/x"})", Code::kInvalidConfig, "dataDirs must be an array"},
           {R"({"dataDirs":[1]})", Code::kInvalidConfig, "dataDirs must be an array"},
           {R"({"logFiles":["var/log/"]})", Code::kInvalidConfig, "logFiles: \"var/log/\" is not valid"},
           {R"({"logFiles":["/var/../etc/"]})", Code::kInvalidConfig, "is not valid"},
           {R"({"dataDirs":["/run/./x"]})", Code::kInvalidConfig, "is not valid"},
           {R"({"allowNodeDevices":["a/b"]})", Code::kInvalidConfig, "allowNodeDevices"},
           {R"({"podResourcesSocket":"kubelet.sock"})", Code::kInvalidConfig, "podResourcesSocket must be"},
           {R"({"podResourcesSocket":["/x"]})", Code::kInvalidConfig, "podResourcesSocket must be"},
           {R"({"nriMemlock":65536})", Code::kInvalidConfig, "nriMemlock must be a string"},
           {R"({"nriMemlock":"64GB"})", Code::kInvalidConfig, "nriMemlock must be a string"},
           {R"([])", Code::kInvalidConfig, "must be a JSON object"},
           {"not json", Code::kDecoding, "node file /etc/erdma-cni/node.json is not valid JSON"},
       }) {
    INFO(r.text);
    auto p = conf::ParseNodePolicy(r.text, f);
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().code == r.code);
    CHECK(p.error().msg.find(r.words) != std::string::npos);
  }
  auto nul = conf::ParseNodePolicy(std::string("{\"dataDirs\":[]}\0{}", 18), f);
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.error().msg.find("NUL") != std::string::npos);
  auto deep =
      conf::ParseNodePolicy(R"({"dataDirs":)" + std::string(100000, '[') + std::string(100000, ']') + "}", f);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().msg.find("deeper than") != std::string::npos);
}

TEST_CASE("a memlock value is bytes with Ki, Mi or Gi, or unlimited") {
  CHECK(conf::ParseMemlock("unlimited") == UINT64_MAX);
  CHECK(conf::ParseMemlock("65536") == uint64_t{65536});
  CHECK(conf::ParseMemlock("64Ki") == uint64_t{65536});
  CHECK(conf::ParseMemlock("8Mi") == uint64_t{8} << 20);
  CHECK(conf::ParseMemlock("1Gi") == uint64_t{1} << 30);
  for (const char* bad : {"", "Mi", "1Ti", "-1", " 1", "1 Mi", "99999999999999999999", "17179869184Gi"}) {
    INFO(bad);
    CHECK_FALSE(conf::ParseMemlock(bad));
  }
  auto p = conf::ParseNodePolicy(R"({"nriMemlock":"unlimited"})", "/n.json");
  REQUIRE(p.ok());
  CHECK(p->nri_memlock == UINT64_MAX);
  CHECK_FALSE(NodePolicy{}.nri_memlock);
}

TEST_CASE("a node file replaces only the lists it names") {
  auto p = conf::ParseNodePolicy(R"({"allowNodeDevices":["eth0"]})", "/n.json");
  REQUIRE(p.ok());
  CHECK(p->data_dirs == NodePolicy{}.data_dirs);
  CHECK(p->log_files == NodePolicy{}.log_files);
  CHECK(p->allow_node_devices == std::vector<std::string>{"eth0"});
  CHECK(p->source == "/n.json");
  CHECK(p->pod_resources_socket == "/var/lib/kubelet/pod-resources/kubelet.sock");
  auto k = conf::ParseNodePolicy(R"({"podResourcesSocket":"/run/k.sock"})", "/n.json");
  REQUIRE(k.ok());
  CHECK(k->pod_resources_socket == "/run/k.sock");
}

TEST_CASE(
    "move mode refuses the device of the node's default route before anything changes, unless allowed") {
  fakenode::Node n;
  const conf::Config cfg = n.Config();
  const cni::Env env = n.MakeEnv(cni::Command::kAdd);
  NodePolicy policy;
  policy.source = "/etc/erdma-cni/node.json";
  const std::string before = n.world.Snapshot().Describe();
  {
    cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
    ctx.sysfs_root = n.sysfs_root;
    ctx.node_policy = &policy;
    auto r = cni::Add(ctx);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidConfig);
    CHECK(r.error().msg.find("eth1, which carries the node's IPv4 default route") != std::string::npos);
    CHECK(r.error().msg.find("allowNodeDevices") != std::string::npos);
    CHECK(n.world.Snapshot().Describe() == before);
    CHECK(n.ipam.calls.empty());
    CHECK(n.StateFiles().empty());
  }
  // A default route at a lower metric through another device makes that one
  // the node's; eth1's own default (the node agent's) no longer counts.
  int eth0 = n.world.AddLink(fake::World::kRoot, {0, "eth0", "00:16:3e:00:00:01", 1500, true, ""});
  netlink::RouteInfo def;
  def.dst = fakenode::P("0.0.0.0/0");
  def.oif = eth0;
  def.metric = 100;
  def.scope = netlink::kScopeLink;
  REQUIRE(n.host->AddRoute(def).ok());
  {
    cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
    ctx.sysfs_root = n.sysfs_root;
    ctx.node_policy = &policy;
    REQUIRE(cni::Add(ctx).ok());
    REQUIRE(n.Del(cfg, env).ok());
  }
  // Listed in the node file: eth0 may go although it carries the default.
  const conf::Config cfg0 = *conf::Parse(
      cni::Modes(),
      R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"eth0"},"dataDir":")" +
          n.dir.path + "\"}");
  {
    cni::Context ctx{cfg0, env, *n.host, n.opener, n.ipam};
    ctx.node_policy = &policy;
    auto refused = cni::Add(ctx);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().msg.find("eth0, which carries") != std::string::npos);
    policy.allow_node_devices = {"eth0"};
    REQUIRE(cni::Add(ctx).ok());
  }
}

TEST_CASE("move mode refuses the node's loopback device") {
  fakenode::Node n;
  const conf::Config cfg = *conf::Parse(
      cni::Modes(),
      R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"lo"},"dataDir":")" +
          n.dir.path + "\"}");
  n.world.AddLink(fake::World::kRoot, {0, "lo", "00:00:00:00:00:00", 65536, true, ""});
  const cni::Env env = n.MakeEnv(cni::Command::kAdd);
  NodePolicy policy;
  cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
  ctx.node_policy = &policy;
  const std::string before = n.world.Snapshot().Describe();
  auto r = cni::Add(ctx);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Code::kInvalidConfig);
  CHECK(r.error().msg.find("lo, which is the node's loopback device") != std::string::npos);
  CHECK(n.world.Snapshot().Describe() == before);
}

TEST_CASE("a macvlan child on the node's default-route device stays allowed: the device stays on the node") {
  fakenode::Node n;
  const conf::Config cfg =
      n.Config(R"(,"mode":"macvlan","macvlan":{"mode":"bridge"},"ipam":{"type":"fake-ipam"})");
  const cni::Env env = n.MakeEnv(cni::Command::kAdd);
  const NodePolicy policy;
  cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
  ctx.sysfs_root = n.sysfs_root;
  ctx.node_policy = &policy;
  auto r = cni::Add(ctx);
  INFO((r.ok() ? std::string() : r.error().msg));
  REQUIRE(r.ok());
  REQUIRE(n.Del(cfg, env).ok());
}

TEST_CASE(
    "attachmentsDir lives apart from every dataDir: an exact entry over or under it is refused, a "
    "config's dataDir there too") {
  auto p = conf::ParseNodePolicy(R"({"dataDirs": ["/tmp/", "/"]})", "/n.json");
  REQUIRE(p.ok());
  CHECK(p->attachments_dir == conf::kAttachmentsDir);
  for (const char* bad :
       {R"({"dataDirs": ["/run"]})", R"({"dataDirs": ["/run/erdma-cni-attachments"]})",
        R"({"dataDirs": ["/run/erdma-cni-attachments/x"]})",
        R"({"dataDirs": ["/var/lib/erdma-cni"], "attachmentsDir": "/var/lib/erdma-cni/r"})",
        R"({"attachmentsDir": "relative"})", R"({"attachmentsDir": "/a/"})", R"({"attachmentsDir": "/"})"}) {
    INFO(bad);
    auto r = conf::ParseNodePolicy(bad, "/n.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Code::kInvalidConfig);
    CHECK_THAT(r.error().msg, Catch::Contains("attachmentsDir"));
  }
  for (const char* bad : {R"(,"dataDir":"/run/erdma-cni-attachments")", R"(,"dataDir":"/run")",
                          R"(,"dataDir":"/run/erdma-cni-attachments/n")"}) {
    INFO(bad);
    auto r = conf::CheckNodePaths(Parsed(bad), *p);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().msg, Catch::Contains("overlaps the node's attachmentsDir"));
  }
  CHECK(conf::CheckNodePaths(Parsed(R"(,"dataDir":"/run/erdma-cni")"), *p).ok());
}

}  // namespace test_unit_node_policy_test

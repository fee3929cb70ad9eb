// Upgrade fixtures: the state, claim and share files an earlier erdma-cni
// wrote for each mode (test/fixtures/state/, README there) must still be read
// the same way, pass CHECK, and DEL back to the node exactly as before ADD.
// Pods stay attached across an upgrade, so a change of the state format
// must keep every fixture passing. The hidden test at the end wrote them.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cni/driver/registry.h"
#include "cni/state/claim.h"
#include "test/unit/fake_vf_node.h"

namespace test_unit_state_upgrade_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

namespace {

namespace fs = std::filesystem;

// Placeholders in the fixtures: the data dir's path in a file's text, and
// the hash of the owner's state path in a child's share file name.
constexpr const char* kDataDirMark = "%DATADIR%";
constexpr const char* kStateHashMark = "%STATEHASH%";

// The attachments: one per mode, and the steps each mode journals between them.
struct UpgradeCase {
  const char* name;
  std::optional<netlink::NetnsMode> rdma;  ///< the node's RDMA netns mode; nullopt: no RDMA netlink
  std::string config;                      ///< the config's members besides cniVersion, name, type, dataDir
  const char* ifname = "net1";
};

const std::string kSmcrAnnotation =
    R"("runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"network.alibabacloud.com/erdma-smcr":"true"}})";
const std::string kIpam = R"("ipam":{"type":"fake-ipam"})";

const std::vector<UpgradeCase>& Cases() {
  static const std::vector<UpgradeCase> cases = {
      {"move-rdma-smcr", netlink::NetnsMode::kExclusive,
       R"("device":{"name":"eth1"},"mtu":9000,"rdma":{"netnsMode":"exclusive"},)" + kSmcrAnnotation +
           R"(,"smcr":{"pnetId":"00163E10F8B0","ueid":"ERDMA-SMC"})"},
      {"macvlan-softroce", netlink::NetnsMode::kShared,
       R"("mode":"macvlan","macvlan":{"mode":"bridge"},"device":{"name":"eth1"},"rdma":{"softRoce":true},)" +
           kIpam},
      {"ipvlan", std::nullopt, R"("mode":"ipvlan","ipvlan":{"mode":"l2"},"device":{"name":"eth1"},)" + kIpam},
      {"vf-kernel", std::nullopt,
       R"("mode":"vf","device":{"pci":"0000:3b:00.2"},)" + kIpam +
           R"(,"vf":{"mac":"02:00:00:3b:00:02","vlan":100,"vlanQoS":2,"spoofchk":false,"trust":true,)"
           R"("linkState":"enable","maxTxRate":1000})"},
      {"vf-vfio", std::nullopt,
       R"("mode":"vf","device":{"pci":"0000:3b:00.3"},)" + kIpam +
           R"(,"vf":{"mac":"02:00:00:3b:00:03","vlan":200})"},
      {"none-smcr", netlink::NetnsMode::kShared,
       R"("mode":"none","device":{"name":"eth1"},"rdma":{"netnsMode":"shared"},)" + kSmcrAnnotation +
           R"(,"prevResult":{"cniVersion":"1.1.0","interfaces":[{"name":"eth0","sandbox":"/run/netns/pod"}],)"
           R"("ips":[{"address":"172.16.0.5/24","interface":0}]})",
       "eth0"},
  };
  return cases;
}

// The mode vf node with, per case, RDMA netlink (erdma_0 paired with eth1 by
// its GUID), SMC with the sysctls of Alibaba Cloud Linux 3, and the pod's
// primary interface eth0 as the runtime's main plugin leaves it.
struct UpgradeNode : VfNode {
  fake::SmcWorld smc{world};
  std::unique_ptr<fake::RdmaWorld> rdma;
  const UpgradeCase& c;

  explicit UpgradeNode(const UpgradeCase& uc) : c(uc) {
    world.AddLink(pod_ns, {0, "eth0", "02:00:00:00:00:05", 1500, true, "veth"});
    if (c.rdma) {
      rdma = std::make_unique<fake::RdmaWorld>(world, *c.rdma);
      fake::RdmaDeviceSpec spec;
      spec.name = "erdma_0";
      spec.node_guid = "0216:3eff:fe10:f8b0";  // from eth1's MAC 00:16:3e:10:f8:b0
      rdma->AddDevice(spec);
      opener.EnableRdma(rdma.get());
    }
    opener.EnableSmc(&smc);
    for (int ns : {pod_ns, fake::World::kRoot}) opener.sysctls.Set(ns, "net.smc.tcp2smc", "0");
    opener.sysctls.Set(pod_ns, "net.ipv6.conf.all.disable_ipv6", "0");
    world.ClearCalls();
  }

  /// Links, addresses, routes and rules of every netns, VF settings, RDMA
  /// devices with their netns and the netns mode, SMC pnet tables and UEIDs,
  /// sysctls.
  std::string All() {
    return Everything() + (rdma ? rdma->Describe() : "") + smc.Describe() + opener.sysctls.Describe();
  }
  conf::Config Cfg() {
    auto cfg = conf::Parse(cni::Modes(), R"({"cniVersion":"1.1.0","name":"erdma","type":"erdma-cni",)" +
                                             c.config + R"(,"dataDir":")" + dir.path + "\"}");
    INFO(c.config);
    REQUIRE(cfg.ok());
    return *cfg;
  }
  cni::Env E(cni::Command cmd) {
    cni::Env e = MakeEnv(cmd);
    e.ifname = c.ifname;
    return e;
  }
  std::string StatePath() const { return dir.path + "/erdma/" + cni::StateStore::FileName("c1", c.ifname); }
};

// claim.cpp's share name suffix, spelled out here so that a change of it shows:
// FNV-1a of the owner's state path, 16 hex digits.
std::string StateHash(const std::string& state_path) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char ch : state_path) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file under `root`: path relative to it -> text.
std::map<std::string, std::string> FilesUnder(const std::string& root) {
  std::map<std::string, std::string> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = Slurp(e.path());
  return out;
}

// What ADD wrote under dataDir, without the sysfs tree the node lays out there.
std::map<std::string, std::string> DataFiles(UpgradeNode& n) {
  std::map<std::string, std::string> out;
  for (const char* sub : {"erdma", "devices", "children"})
    for (auto& [rel, text] : FilesUnder(n.dir.path + "/" + sub)) out[std::string(sub) + "/" + rel] = text;
  return out;
}

// The attachment's state as Load reads it, re-serialised by this build; the
// error when it cannot be read.
// `older`: without what the fixtures' build did not write yet (the pod
// netns identity: an older state's is "unknown").
// `older`: what this build writes that the fixtures' builds did not: the
// netns identity, and the pciID of a moved device or a child's parent in
// the recorded result (a VF's they wrote too).
std::string LoadedState(UpgradeNode& n, bool older = false, bool vf = false) {
  cni::StateStore store(n.dir.path, "erdma");
  auto st = store.Load(n.StatePath());
  if (!st.ok()) return "unreadable: " + st.error().msg;
  if (*st && older) {
    (*st)->netns_id.reset();
    if (!vf && (*st)->result.contains("interfaces"))
      for (json& i : (*st)->result["interfaces"]) i.erase("pciID");
  }
  return *st ? cni::StateText(**st) : "missing";
}

// Claims and shares as DEL and diag read them, the share's file name aside.
std::vector<std::string> Holdings(UpgradeNode& n) {
  std::vector<std::string> out;
  for (const auto& h : cni::ListHolds(n.dir.path + "/devices", n.dir.path + "/children")) {
    json owner = {{"network", h.owner.network}, {"containerID", h.owner.container_id},
                  {"ifName", h.owner.if_name},  {"state", h.owner.state_path},
                  {"device", h.owner.device},   {"mac", h.owner.mac},
                  {"pci", h.owner.pci},         {"steps", h.owner.steps}};
    out.push_back(h.device + (h.share ? " share " : " claim ") + (h.live ? "live " : "stale ") +
                  owner.dump());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::string kFixtures = ERDMA_STATE_FIXTURES_DIR;

}  // namespace

TEST_CASE("DEL and CHECK of the current build handle attachments that earlier builds made, in every mode",
          "[engine][upgrade]") {
  for (const UpgradeCase& c : Cases()) {
    DYNAMIC_SECTION(c.name) {
      UpgradeNode n(c);
      const std::string before = n.All();
      const conf::Config cfg = n.Cfg();
      auto added = n.Add(cfg, n.E(cni::Command::kAdd));
      INFO((added.ok() ? std::string() : added.error().msg));
      REQUIRE(added.ok());
      const std::string written = LoadedState(n, true, std::string_view(c.name).starts_with("vf"));
      REQUIRE_THAT(written, Catch::StartsWith("{"));  // this build reads back what it wrote
      const std::vector<std::string> holdings = Holdings(n);

      // The fixture in place of what this build wrote.
      for (const auto& [rel, text] : DataFiles(n)) REQUIRE(base::RemoveFile(n.dir.path + "/" + rel).ok());
      const auto fixture = FilesUnder(kFixtures + "/" + c.name);
      REQUIRE_FALSE(fixture.empty());
      for (const auto& [rel, text] : fixture) {
        const std::string path = n.dir.path + "/" + ReplaceAll(rel, kStateHashMark, StateHash(n.StatePath()));
        REQUIRE(base::MakePrivateDirs(fs::path(path).parent_path().string()).ok());
        REQUIRE(base::WriteFileAtomic(path, ReplaceAll(text, kDataDirMark, n.dir.path)).ok());
      }
      // It reads as what this build writes for the same attachment.
      CHECK(LoadedState(n) == written);
      CHECK(Holdings(n) == holdings);

      auto checked = n.Check(cfg, n.E(cni::Command::kCheck));
      INFO((checked.ok() ? std::string() : checked.error().msg));
      CHECK(checked.ok());
      auto deleted = n.Del(cfg, n.E(cni::Command::kDel));
      INFO((deleted.ok() ? std::string() : deleted.error().msg));
      REQUIRE(deleted.ok());
      CHECK(n.All() == before);
      CHECK(DataFiles(n).empty());  // no state, claim or share left, none set aside as unreadable
      CHECK(n.ipam.leases == 0);
    }
  }
}

// Hidden: ERDMA_CNI_WRITE_STATE_FIXTURES=<dir> unit_tests "[.write-state-fixtures]"
// writes <dir>/<case>/... from an ADD of this build (README in test/fixtures/state/).
TEST_CASE("write the upgrade fixtures from this build's ADD", "[.write-state-fixtures]") {
  const char* out = std::getenv("ERDMA_CNI_WRITE_STATE_FIXTURES");
  INFO("set ERDMA_CNI_WRITE_STATE_FIXTURES to the directory to write them to");
  REQUIRE(out);
  for (const UpgradeCase& c : Cases()) {
    UpgradeNode n(c);
    auto added = n.Add(n.Cfg(), n.E(cni::Command::kAdd));
    INFO(c.name << ": " << (added.ok() ? std::string() : added.error().msg));
    REQUIRE(added.ok());
    const fs::path dir = fs::path(out) / c.name;
    fs::remove_all(dir);
    for (const auto& [rel, text] : DataFiles(n)) {
      const fs::path path = dir / ReplaceAll(rel, StateHash(n.StatePath()), kStateHashMark);
      fs::create_directories(path.parent_path());
      std::ofstream(path, std::ios::binary) << ReplaceAll(text, n.dir.path, kDataDirMark);
    }
  }
}

}  // namespace test_unit_state_upgrade_test

// What the state directory holds is input: a state or claim file with values
// ADD never writes is refused, names cannot collide, and the directory
// itself must be root's alone. (The kernel tests show DEL acting on none of it.)
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/file.h"
#include "cni/core/env.h"
#include "cni/device/rails.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"
#include "cni/state/state_check.h"

namespace test_unit_state_hostile_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/erdma-state-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { fs::remove_all(path); }
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A move-mode state as ADD writes it.
cni::AttachmentState Valid(const std::string& cid = "c1", const std::string& ifname = "net1") {
  cni::AttachmentState st;
  st.network = "erdma";
  st.container_id = cid;
  st.if_name = ifname;
  st.netns = "/run/netns/pod";
  st.pod_if_name = ifname;
  st.table = 200;
  st.origin.name = "eth1";
  st.origin.index = 3;
  st.origin.mac = "00:16:3e:10:f8:b0";
  st.origin.mtu = 1500;
  st.origin.up = true;
  st.origin.kind = "veth";
  st.steps.push_back(
      cni::StepIpam{"host-local", {{"cniVersion", "1.0.0"}, {"ipam", {{"type", "host-local"}}}}});
  st.steps.push_back(cni::StepMove{ifname});
  netlink::RuleInfo rule;
  rule.family = 2;
  rule.priority = 200;
  rule.src = netlink::IpPrefix::Parse("10.9.0.5/32");
  rule.table = 200;
  st.steps.push_back(cni::StepRule{rule});
  return st;
}

// The state's JSON with `edit` applied, saved where (cid, ifname) lives, then loaded.
base::Result<std::optional<cni::AttachmentState>> LoadEdited(const Dir& d,
                                                             const std::function<void(json&)>& edit) {
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  json j = json::parse(cni::StateText(Valid()));
  edit(j);
  const std::string path = store.PathFor("c1", "net1");
  Write(path, j.dump());
  return store.Load(path);
}

}  // namespace

TEST_CASE("state files of (p, q-net1) and (p-q, net1) have different names", "[state][hostile]") {
  cni::StateStore store("/run/erdma-cni", "erdma");
  CHECK(store.PathFor("p", "q-net1") != store.PathFor("p-q", "net1"));
  CHECK(store.PathFor("p", "q.x") != store.PathFor("p", "q%2ex"));  // the escape is escaped
  // No new name is an old one (<containerID>-<ifname>, which starts with a letter or digit).
  CHECK(cni::StateStore::FileName("p", "q")[0] == '@');
}

TEST_CASE("interface names that end like a temp or set-aside file still name states GC lists",
          "[state][hostile]") {
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  for (const auto& [cid, ifname] : std::vector<std::pair<std::string, std::string>>{
           {"c1", "a.tmp.1"}, {"c2", "x.unreadable"}, {"c3.tmp.7", "net1"}}) {
    auto st = Valid(cid, ifname);
    REQUIRE(store.Save(store.PathFor(cid, ifname), st).ok());
  }
  auto listed = store.List();
  REQUIRE(listed.ok());
  CHECK(listed->size() == 3);
}

TEST_CASE("a state that takes another attachment's old file name is not that attachment's",
          "[state][hostile]") {
  // Today's build named both (p, q-net1) and (p-q, net1) "p-q-net1".
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  const std::string legacy = store.Dir() + "/p-q-net1";
  REQUIRE(base::WriteFileAtomic(legacy, cni::StateText(Valid("p-q", "net1"))).ok());
  auto loaded = store.Load(legacy);
  REQUIRE(loaded.ok());
  REQUIRE(*loaded);
  CHECK((*loaded)->container_id == "p-q");
  // LoadLocated finds the older file, and loads it.
  std::string path;
  auto found = store.LoadLocated("p-q", "net1", &path);
  CHECK(path == legacy);
  REQUIRE(found.ok());
  REQUIRE(*found);
  CHECK((*found)->container_id == "p-q");
  found = store.LoadLocated("p", "q-net1", &path);
  CHECK(path == store.PathFor("p", "q-net1"));
  REQUIRE(found.ok());
  CHECK_FALSE(*found);
  // Under the new name the file is found first.
  auto newer = Valid("p-q", "net1");
  newer.netns = "/run/netns/pod2";
  REQUIRE(store.Save(store.PathFor("p-q", "net1"), newer).ok());
  found = store.LoadLocated("p-q", "net1", &path);
  CHECK(path == store.PathFor("p-q", "net1"));
  REQUIRE(found.ok());
  REQUIRE(*found);
  CHECK((*found)->netns == "/run/netns/pod2");
}

TEST_CASE("an unreadable state under the older name is this attachment's only when its claim says so",
          "[state][hostile]") {
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  const std::string legacy = store.Dir() + "/p-q-net1";
  Write(legacy, "{truncated");
  std::string path;
  auto found = store.LoadLocated("p-q", "net1", &path);
  CHECK(path == store.PathFor("p-q", "net1"));
  REQUIRE(found.ok());
  CHECK_FALSE(*found);
  {
    auto claim = cni::DeviceClaim::Lock(store.DevicesDir(), "eth1", 1000);
    REQUIRE(claim.ok());
    REQUIRE(claim->SetOwner({"erdma", "p-q", "net1", legacy, "eth1", "00:16:3e:10:f8:b0", "", {}}).ok());
  }
  found = store.LoadLocated("p-q", "net1", &path);
  CHECK(path == legacy);
  REQUIRE_FALSE(found.ok());
  CHECK(found.error().code == base::Code::kState);
  // Another attachment's claim does not make it ours.
  found = store.LoadLocated("p", "q-net1", &path);
  CHECK(path == store.PathFor("p", "q-net1"));
}

TEST_CASE("a state file holding values ADD never writes is refused with code 106 naming the field",
          "[state][hostile]") {
  struct Case {
    const char* what;
    const char* field;
    std::function<void(json&)> edit;
  };
  const std::vector<Case> cases = {
      {"an IPAM type that climbs out of CNI_PATH", "type",
       [](json& j) { j["steps"][0]["type"] = "../../../../tmp/x.sh"; }},
      {"an IPAM type that is a path", "type", [](json& j) { j["steps"][0]["type"] = "/tmp/x.sh"; }},
      {"a pod interface name with a slash", "podIfName", [](json& j) { j["podIfName"] = "a/b"; }},
      {"a moved name that is too long", "name", [](json& j) { j["steps"][1]["name"] = "abcdefghijklmnopq"; }},
      {"a relative netns", "netns", [](json& j) { j["netns"] = "proc/1/ns/net"; }},
      {"a netns with a newline", "netns", [](json& j) { j["netns"] = "/run/netns/p\nod"; }},
      {"a device MAC of all zeros (lo's)", "device.mac",
       [](json& j) { j["device"]["mac"] = "00:00:00:00:00:00"; }},
      {"a device MAC that is no MAC", "device.mac", [](json& j) { j["device"]["mac"] = "zz"; }},
      {"a device name with a newline", "device.name", [](json& j) { j["device"]["name"] = "eth\n1"; }},
      {"the main table", "table", [](json& j) { j["table"] = 254; }},
      {"a rule into the main table", "rule", [](json& j) { j["steps"][2]["rule"]["table"] = 254; }},
      {"a rule from all", "rule", [](json& j) { j["steps"][2]["rule"].erase("src"); }},
      {"a container ID with a slash", "containerID", [](json& j) { j["containerID"] = "../c1"; }},
      {"a sysctl outside net.", "name",
       [](json& j) {
         j["steps"].push_back(
             {{"op", "sysctl"}, {"name", "kernel.core_pattern"}, {"value", "|/tmp/x"}, {"old", ""}});
       }},
      {"a child whose parent is a path", "parent",
       [](json& j) {
         j["steps"].push_back({{"op", "child"},
                               {"kind", "macvlan"},
                               {"parent", "../eth1"},
                               {"parentIndex", 3},
                               {"name", "net1"},
                               {"mac", ""},
                               {"mode", 0},
                               {"sourceMacs", json::array()}});
       }},
      {"a device-info file outside Multus's directory", "deviceInfo.path",
       [](json& j) {
         j["deviceInfo"] = {{"path", "/etc/passwd"}, {"text", ""}, {"dev", 0}, {"ino", 0}};
       }},
      {"a device-info file climbing out of Multus's directory", "deviceInfo.path",
       [](json& j) {
         j["deviceInfo"] = {
             {"path", "/run/k8s.cni.cncf.io/devinfo/cni/../x"}, {"text", ""}, {"dev", 0}, {"ino", 0}};
       }},
      {"a state of another attachment", "not the one its name", [](json& j) { j["containerID"] = "c2"; }},
      {"a state of another network", "not the one its name", [](json& j) { j["network"] = "other"; }},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Dir d;
    auto loaded = LoadEdited(d, c.edit);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == base::Code::kState);
    CHECK(loaded.error().sys_errno == cni::kHostileState);
    CHECK_THAT(loaded.error().msg, Catch::Contains(c.field) && Catch::Contains("remove the file"));
  }
  Dir d;
  auto fine = LoadEdited(d, [](json&) {});
  CHECK(fine.ok());
}

TEST_CASE("a state nested deeper than the JSON limit is refused, not a crash", "[state][hostile]") {
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  const std::string path = store.PathFor("c1", "net1");
  Write(path, std::string(100000, '[') + std::string(100000, ']'));
  auto loaded = store.Load(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().code == base::Code::kState);
}

TEST_CASE("a state larger than what can be read back is refused before it is written", "[state][hostile]") {
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  auto st = Valid();
  st.result = json{{"pad", std::string(cni::kMaxStateBytes, 'x')}};
  const std::string path = store.PathFor("c1", "net1");
  auto saved = store.Save(path, st);
  REQUIRE_FALSE(saved.ok());
  CHECK(saved.error().code == base::Code::kState);
  CHECK_THAT(saved.error().msg, Catch::Contains("reads back"));
  CHECK_FALSE(base::PathExists(path));
}

TEST_CASE("a claim naming lo, an all-zero MAC or a state outside a network directory is ignored",
          "[state][hostile][claim]") {
  Dir d;
  const std::string devices = d.path + "/devices";
  REQUIRE(base::MakePrivateDirs(devices).ok());
  const std::string state = d.path + "/erdma/" + cni::StateStore::FileName("c1", "lo");
  auto claim = [&](const std::string& file, const json& j) { Write(devices + "/" + file, j.dump()); };
  json good = {{"network", "erdma"}, {"containerID", "c1"},        {"ifName", "lo"}, {"state", state},
               {"device", "eth1"},   {"mac", "00:16:3e:10:f8:b0"}, {"pci", ""}};
  json zero = good;
  zero["mac"] = "00:00:00:00:00:00";
  claim("x0", zero);
  CHECK_FALSE(cni::ClaimOf(devices, state));
  json outside = good;
  outside["state"] = "/etc/passwd";
  claim("x0", outside);
  CHECK_FALSE(cni::ClaimOf(devices, "/etc/passwd"));
  json bad_device = good;
  bad_device["device"] = "eth1\n";
  claim("x0", bad_device);
  CHECK_FALSE(cni::ClaimOf(devices, state));
  claim("x0", good);
  CHECK(cni::ClaimOf(devices, state));
}

TEST_CASE("a state directory others may write, or reached through a symlink, is refused",
          "[state][hostile][dir]") {
  Dir d;
  const std::string data = d.path + "/data";
  REQUIRE(base::MakePrivateDirs(data).ok());
  CHECK(base::CheckPrivateDir(data).ok());
  SECTION("mode 0777") {
    REQUIRE(::chmod(data.c_str(), 0777) == 0);
    auto s = base::CheckPrivateDir(data);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().msg, Catch::Contains("0777") && Catch::Contains("chmod 0700"));
    CHECK_FALSE(cni::StateStore(data, "erdma").Check().ok());
  }
  SECTION("owned by another user") {
    if (::geteuid() != 0) return;  // chown needs root; the kernel suite covers it too
    REQUIRE(::chown(data.c_str(), 65534, 65534) == 0);
    auto s = base::CheckPrivateDir(data);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().msg, Catch::Contains("owned by uid 65534"));
  }
  SECTION("a symlink above dataDir") {
    fs::create_directory_symlink(d.path, d.path + "/link");
    auto s = base::CheckPrivateDir(d.path + "/link/data");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().msg, Catch::Contains("symlink"));
    CHECK_FALSE(base::MakePrivateDirs(d.path + "/link/data/erdma").ok());
    CHECK_FALSE(base::PathExists(data + "/erdma"));
  }
  SECTION("an ancestor others may write, without the sticky bit") {
    const std::string open = d.path + "/open";
    fs::create_directory(open);
    REQUIRE(::chmod(open.c_str(), 0777) == 0);
    CHECK_FALSE(base::MakePrivateDirs(open + "/data").ok());
    REQUIRE(::chmod(open.c_str(), 01777) == 0);  // like /tmp
    CHECK(base::MakePrivateDirs(open + "/data").ok());
  }
  SECTION("children/<parent> is a symlink: its target is not listed") {
    REQUIRE(base::MakePrivateDirs(data + "/children").ok());
    fs::create_directory(d.path + "/victim");
    Write(d.path + "/victim/keep", "x");
    fs::create_directory_symlink(d.path + "/victim", data + "/children/eth1");
    auto shares = cni::LiveShares(data + "/children", "eth1");
    CHECK(shares.empty());
    CHECK(base::PathExists(d.path + "/victim/keep"));
  }
}

TEST_CASE("state files are used through the directory that was checked, not a symlink put in its place",
          "[state][hostile][dir]") {
  Dir d;
  const std::string net = d.path + "/data/erdma";
  REQUIRE(base::MakePrivateDirs(net).ok());
  REQUIRE(base::WriteFileAtomic(net + "/old", "x").ok());
  // Swapped after the check: the checked directory moves away and a symlink
  // to a directory outside the state dir takes its name.
  fs::create_directory(d.path + "/victim");
  Write(d.path + "/victim/keep", "victim");
  fs::rename(net, d.path + "/data/moved");
  fs::create_directory_symlink(d.path + "/victim", net);

  REQUIRE(base::WriteFileAtomic(net + "/new", "y").ok());
  CHECK(base::RenameFile(net + "/new", "renamed").ok());
  auto files = base::ListFiles(net);
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{"old", "renamed"});
  auto keep = base::ReadFileNoFollow(net + "/keep", 64);
  REQUIRE_FALSE(keep.ok());
  CHECK(keep.error().sys_errno == ENOENT);
  CHECK(base::RemoveFile(net + "/keep").ok());
  {
    auto lock = base::FileLock::Acquire(net + "/lock", 100);
    REQUIRE(lock.ok());
    lock->Unlink();
  }
  // Everything happened in the checked directory; the symlink's target is untouched.
  CHECK(fs::exists(d.path + "/data/moved/renamed"));
  CHECK_FALSE(fs::exists(d.path + "/data/moved/lock"));
  std::vector<std::string> victim;
  for (const auto& e : fs::directory_iterator(d.path + "/victim")) victim.push_back(e.path().filename());
  CHECK(victim == std::vector<std::string>{"keep"});
  // The next check of the path (the next command) sees the symlink and refuses it.
  auto again = base::CheckPrivateDir(net);
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().msg, Catch::Contains("symlink"));
  CHECK_FALSE(base::WriteFileAtomic(net + "/new", "y").ok());
  CHECK(victim.size() == 1);
}

TEST_CASE("a file in a directory that was never checked is used only after the directory passes the check",
          "[state][hostile][dir]") {
  Dir d;
  const std::string open = d.path + "/open";
  fs::create_directory(open);
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  auto w = base::WriteFileAtomic(open + "/state", "x");
  REQUIRE_FALSE(w.ok());
  CHECK_THAT(w.error().msg, Catch::Contains("0777"));
  CHECK_FALSE(fs::exists(open + "/state"));
  Write(open + "/planted", "x");
  CHECK_FALSE(base::ReadFileNoFollow(open + "/planted", 64).ok());
  CHECK_FALSE(base::ListFiles(open).ok());
  CHECK_FALSE(base::FileLock::Acquire(open + "/lock", 100).ok());
  CHECK_FALSE(fs::exists(open + "/lock"));
}

TEST_CASE("ADD refuses a container ID too long for its state file name, DEL accepts the old limit",
          "[state][hostile][env]") {
  for (size_t len : {size_t{193}, size_t{244}, size_t{256}}) {
    INFO(len);
    const std::string id(len, 'a');
    auto env = [&](const char* command) {
      return cni::ParseEnv([&](const char* k) -> const char* {
        const std::string key = k;
        if (key == "CNI_COMMAND") return command;
        if (key == "CNI_CONTAINERID") return id.c_str();
        if (key == "CNI_NETNS") return "/run/netns/pod";
        if (key == "CNI_IFNAME") return "net1";
        return nullptr;
      });
    };
    auto add = env("ADD");
    REQUIRE_FALSE(add.ok());
    CHECK(add.error().code == base::Code::kInvalidEnv);
    CHECK_THAT(add.error().msg, Catch::Contains("CNI_CONTAINERID") && Catch::Contains("192"));
    CHECK(env("DEL").ok());
  }
  // The longest ID ADD takes still fits NAME_MAX with every suffix.
  const std::string longest(192, 'a');
  CHECK(cni::StateStore::FileName(longest, "a.b.c.d.e.f.g.h").size() + std::string(".tmp.4194304").size() <=
        255);
}

TEST_CASE("ADD never writes a state its DEL would refuse: Save runs the reader's validation first",
          "[state][hostile]") {
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  const std::string path = store.PathFor("c1", "net1");
  // A node device named with a control character (the kernel takes "w\x01x").
  cni::AttachmentState st = Valid();
  st.origin.name = "w\x01x";
  base::Status saved = store.Save(path, st);
  REQUIRE_FALSE(saved.ok());
  CHECK(saved.error().msg.find("refusing to record what no DEL could read back") != std::string::npos);
  CHECK(saved.error().msg.find("device.name") != std::string::npos);
  CHECK_FALSE(fs::exists(path));
  // What Save accepts, Load reads back whole.
  REQUIRE(store.Save(path, Valid()).ok());
  auto loaded = store.Load(path);
  REQUIRE(loaded.ok());
  REQUIRE(loaded->has_value());
  CHECK(cni::StateText(**loaded) == cni::StateText(Valid()));
}

TEST_CASE("a member's why names a GPU ID from the kubelet escaped and cut, so the journal can hold it",
          "[state][hostile]") {
  const std::string id =
      GENERATE(std::string("GPU-\x01\x1b[2J"), std::string(2000, 'g'), std::string(600, '\x01'),
               std::string(300, 'g') + "\xc3\xa9" + std::string(300, 'g'));
  cni::RankedNic nic;
  nic.name = "eth1";
  nic.gpu = id;
  nic.level = cni::PciLevel::kSys;
  nic.round = 1;
  const std::string why = cni::RailWhy(nic, cni::RankBasis::kTopology, true);
  INFO(why);
  CHECK(why.starts_with("SYS to GPU "));
  cni::AttachmentState group;
  group.network = "erdma";
  group.container_id = "c1";
  group.if_name = "net1";
  group.pod_if_name = "net1";
  group.group = true;
  group.steps.push_back(cni::StepMember{"net1", "eth1", why});
  CHECK(cni::ValidateState(group).ok());
  Dir d;
  cni::StateStore store(d.path, "erdma");
  REQUIRE(store.Prepare().ok());
  const std::string path = store.GroupPathFor("c1", "net1");
  REQUIRE(store.Save(path, group).ok());
  auto loaded = store.Load(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->has_value());
}

}  // namespace test_unit_state_hostile_test

// nri/pods.h: a sandbox's rails as the agent reads them from the plugin's own records and states, and the
// device nodes from a sysfs tree laid out here as the kernel lays out /sys/class/infiniband_verbs.
#include "nri/pods.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cni/state/record.h"
#include "cni/state/state.h"

namespace test_unit_nri_pods_test {

namespace fs = std::filesystem;

namespace {

struct Node {
  std::string dir;
  conf::NodePolicy policy;
  std::string sysfs;
  Node() {
    char tmpl[] = "/tmp/erdma-nri-XXXXXX";
    dir = mkdtemp(tmpl);
    policy.data_dirs = {dir + "/data"};
    policy.attachments_dir = dir + "/attachments";
    sysfs = dir + "/sys";
    Kernel("uverbs0", "erdma_0", "231:192");
    Kernel("uverbs1", "erdma_1", "231:193");
    fs::create_directories(sysfs + "/class/misc/rdma_cm");
    std::ofstream(sysfs + "/class/misc/rdma_cm/dev") << "10:58\n";
  }
  ~Node() { fs::remove_all(dir); }
  void Kernel(const std::string& uverbs, const std::string& ibdev, const std::string& dev) const {
    const std::string d = sysfs + "/class/infiniband_verbs/" + uverbs;
    fs::create_directories(d);
    std::ofstream(d + "/ibdev") << ibdev << "\n";
    std::ofstream(d + "/dev") << dev << "\n";
  }
  // What a completed ADD leaves: the state at `data_dir`, and the node's record pointing there.
  void Attach(const cni::AttachmentState& st, const std::string& data_dir, const std::string& file) const {
    const cni::StateStore store(data_dir, st.network);
    REQUIRE(store.Prepare().ok());
    REQUIRE(store.Save(store.Dir() + "/" + file, st).ok());
    Record(st.container_id, st.if_name, data_dir, st.network);
  }
  void Record(const std::string& cid, const std::string& ifname, const std::string& data_dir,
              const std::string& network) const {
    auto r = cni::AttachmentRecord::Begin(policy.attachments_dir, cid, ifname, {data_dir, network}, 1000);
    REQUIRE(r.ok());
  }
};

cni::AttachmentState State(const std::string& cid, const std::string& ifname, const std::string& rdma) {
  cni::AttachmentState st;
  st.network = "erdma";
  st.container_id = cid;
  st.if_name = ifname;
  st.pod_if_name = ifname;
  st.rdma_device = rdma;
  st.rdma_mode = rdma.empty() ? "" : "shared";
  st.complete = true;
  return st;
}

std::vector<std::string> Devices(const nri::PodRdma& p) {
  std::vector<std::string> out;
  for (const auto& r : p.rails) out.push_back(r.rdma_device + (r.uverbs ? " " + r.uverbs->path : " -"));
  return out;
}

}  // namespace

TEST_CASE("a sandbox's rails are its attachments' RDMA devices, each with its uverbs node", "[nri]") {
  Node n;
  n.Attach(State("sb1", "net1", "erdma_1"), n.dir + "/data", cni::StateStore::FileName("sb1", "net1"));
  n.Attach(State("sb1", "net2", ""), n.dir + "/data", cni::StateStore::FileName("sb1", "net2"));
  std::vector<std::string> notes;
  const nri::PodRdma p = nri::RailsOf(n.policy, "sb1", n.sysfs, &notes);
  CHECK(Devices(p) == std::vector<std::string>{"erdma_1 /dev/infiniband/uverbs1"});
  REQUIRE(p.rails[0].uverbs);
  CHECK(p.rails[0].uverbs->major == 231);
  CHECK(p.rails[0].uverbs->minor == 193);
  REQUIRE(p.rdma_cm);
  CHECK(p.rdma_cm->minor == 58);
  CHECK(notes.empty());
  // Another sandbox, and an ID that is no container ID, have none.
  CHECK(nri::RailsOf(n.policy, "sb2", n.sysfs, &notes).rails.empty());
  CHECK(nri::RailsOf(n.policy, "../sb1", n.sysfs, &notes).rails.empty());
}

TEST_CASE("a group's rails come in the order it attached its members", "[nri]") {
  Node n;
  const std::string data = n.dir + "/data";
  cni::AttachmentState group = State("sb1", "eth0", "");
  group.group = true;
  group.pod_if_name = "erdma0";
  group.steps = {cni::StepMember{"erdma0", "erdma_1", "pool"}, cni::StepMember{"erdma1", "erdma_0", "pool"}};
  const cni::StateStore store(data, "erdma");
  REQUIRE(store.Prepare().ok());
  REQUIRE(store.Save(store.GroupPathFor("sb1", "eth0"), group).ok());
  for (auto [name, dev] : {std::pair{"erdma0", "erdma_1"}, std::pair{"erdma1", "erdma_0"}}) {
    cni::AttachmentState m = State("sb1", name, dev);
    m.member_of = "eth0";
    REQUIRE(store.Save(store.PathFor("sb1", name), m).ok());
  }
  n.Record("sb1", "eth0", data, "erdma");
  std::vector<std::string> notes;
  CHECK(Devices(nri::RailsOf(n.policy, "sb1", n.sysfs, &notes)) ==
        std::vector<std::string>{"erdma_1 /dev/infiniband/uverbs1", "erdma_0 /dev/infiniband/uverbs0"});
  CHECK(notes.empty());
}

TEST_CASE("a record or a state the plugin would not trust gives no rail, and says why", "[nri]") {
  Node n;
  SECTION("a record naming a dataDir the node file does not allow") {
    n.Attach(State("sb1", "net1", "erdma_1"), n.dir + "/elsewhere", cni::StateStore::FileName("sb1", "net1"));
    std::vector<std::string> notes;
    CHECK(nri::RailsOf(n.policy, "sb1", n.sysfs, &notes).rails.empty());
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("does not allow"));
  }
  SECTION("a state in sb1's file that is another sandbox's") {
    n.Attach(State("sb2", "net1", "erdma_1"), n.dir + "/data", cni::StateStore::FileName("sb1", "net1"));
    n.Record("sb1", "net1", n.dir + "/data", "erdma");
    std::vector<std::string> notes;
    CHECK(nri::RailsOf(n.policy, "sb1", n.sysfs, &notes).rails.empty());
    CHECK_FALSE(notes.empty());
  }
  SECTION("a state whose RDMA device the kernel has no uverbs node for") {
    n.Attach(State("sb1", "net1", "erdma_9"), n.dir + "/data", cni::StateStore::FileName("sb1", "net1"));
    std::vector<std::string> notes;
    const nri::PodRdma p = nri::RailsOf(n.policy, "sb1", n.sysfs, &notes);
    CHECK(Devices(p) == std::vector<std::string>{"erdma_9 -"});
    CHECK_THAT(notes.at(0), Catch::Contains("no uverbs node"));
  }
}

}  // namespace test_unit_nri_pods_test

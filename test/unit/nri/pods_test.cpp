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
  // A PCI function directly on the root bus, without a NUMA node (a VM's), as sysfs lays it out.
  std::string Pci(const std::string& bdf) const {
    const std::string at = sysfs + "/devices/pci0000:00/" + bdf;
    fs::create_directories(at);
    std::ofstream(at + "/numa_node") << "-1\n";
    fs::create_directories(sysfs + "/bus/pci/devices");
    if (!fs::exists(sysfs + "/bus/pci/devices/" + bdf))
      fs::create_directory_symlink(at, sysfs + "/bus/pci/devices/" + bdf);
    return at;
  }
  // NVIDIA's driver file of the GPU at `bdf`, /dev/nvidia<minor>.
  void Gpu(const std::string& bdf, int minor) const {
    Pci(bdf);
    const std::string d = dir + "/proc/driver/nvidia/gpus/" + bdf;
    fs::create_directories(d);
    std::ofstream(d + "/information")
        << "Model: \t\t NVIDIA H200\nBus Location: \t " << bdf << "\nDevice Minor: \t " << minor << "\n";
  }
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

TEST_CASE("a rail's PCI function is found through its uverbs entry, a container's GPUs through the driver",
          "[nri]") {
  Node n;
  fs::create_directory_symlink(n.Pci("0000:00:07.0"), n.sysfs + "/class/infiniband_verbs/uverbs1/device");
  n.Attach(State("sb1", "net1", "erdma_1"), n.dir + "/data", cni::StateStore::FileName("sb1", "net1"));
  n.Attach(State("sb1", "net2", "erdma_0"), n.dir + "/data", cni::StateStore::FileName("sb1", "net2"));
  std::vector<std::string> notes;
  const nri::PodRdma p = nri::RailsOf(n.policy, "sb1", n.sysfs, &notes);
  REQUIRE(p.rails.size() == 2);
  REQUIRE(p.rails[0].pci);
  CHECK(p.rails[0].pci->path == std::vector<std::string>{"0000:00:07.0"});
  CHECK(p.rails[0].pci->numa == -1);
  CHECK_FALSE(p.rails[1].pci);  // uverbs0 has no device link: Soft-RoCE's has no PCI parent either

  n.Gpu("0000:00:06.0", 0);
  n.Gpu("0000:00:08.0", 1);
  nri::Container c;
  c.devices = {{"/dev/nvidia1", "c", 195, 1, std::nullopt, std::nullopt, std::nullopt},
               {"/dev/nvidia5", "c", 195, 5, std::nullopt, std::nullopt, std::nullopt}};
  notes.clear();
  const auto gpus = nri::GpusOf(c, n.sysfs, n.dir + "/proc", &notes);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].label == "0000:00:08.0");
  REQUIRE(gpus[0].pci);
  CHECK(gpus[0].pci->path == std::vector<std::string>{"0000:00:08.0"});
  CHECK_FALSE(gpus[1].pci);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("no driver file has Device Minor 5"));
  // Without the driver's files no GPU is located; without GPUs there are none.
  for (const auto& g : nri::GpusOf(c, n.sysfs, n.dir + "/nowhere", &notes)) CHECK_FALSE(g.pci);
  CHECK(nri::GpusOf(nri::Container{}, n.sysfs, n.dir + "/proc", &notes).empty());
}

TEST_CASE("topology files are one per container, readable, and go with their pod", "[nri]") {
  Node n;
  const std::string dir = n.dir + "/topo";
  auto a = nri::WriteTopology(dir, "sb1", "ctr1", "<system/>\n");
  REQUIRE(a.ok());
  CHECK(*a == dir + "/sb1/ctr1.xml");
  struct stat st {};
  REQUIRE(::stat(a->c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  REQUIRE(::stat((dir + "/sb1").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  REQUIRE(nri::WriteTopology(dir, "sb1", "ctr2", "<system/>\n").ok());
  REQUIRE(nri::WriteTopology(dir, "sb2", "ctr3", "<system/>\n").ok());
  // IDs from the runtime name no path of their own.
  for (auto [sb, ctr] : {std::pair{"../sb1", "ctr1"}, std::pair{"sb1", "../../etc/x"}, std::pair{"", "c"}})
    CHECK(nri::WriteTopology(dir, sb, ctr, "x").error().code == base::Code::kInvalidConfig);
  nri::RemoveTopologies(dir, "../topo/sb2");
  CHECK(fs::exists(dir + "/sb2/ctr3.xml"));

  nri::RemoveTopologies(dir, "sb1");
  CHECK_FALSE(fs::exists(dir + "/sb1"));
  CHECK(fs::exists(dir + "/sb2/ctr3.xml"));
  REQUIRE(nri::WriteTopology(dir, "sb4", "ctr4", "<system/>\n").ok());
  nri::KeepTopologies(dir, {"sb4", "sb9"});
  CHECK_FALSE(fs::exists(dir + "/sb2"));
  CHECK(fs::exists(dir + "/sb4/ctr4.xml"));
  nri::RemoveTopologies(n.dir + "/missing", "sb4");  // nothing there: nothing to do
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

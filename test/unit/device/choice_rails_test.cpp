// A pool on a node with PCIe switches: the pod's GPUs known by UUID through
// the NVIDIA driver's files, each given its nearest device (NCCL's levels),
// devices NCCL would not use passed over.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cni/device/choice.h"
#include "test/unit/fake_node.h"

namespace test_unit_device_choice_rails_test {

using fakenode::Node;

namespace {

namespace fs = std::filesystem;

// Two NUMA nodes. Node 0: GPU 0000:03:00.0 and eth1 behind one switch
// (0000:01:00.0), eth2 on another root port. Node 1: GPU 0000:83:00.0 and
// eth3 behind a switch, eth4 on another root port.
struct SwitchNode {
  Node node;
  std::string sys = node.dir.path + "/sys", proc = node.dir.path + "/proc";

  void Device(const std::string& path, int numa) {
    const std::string dir = sys + "/devices/" + path;
    fs::create_directories(dir);
    std::ofstream(dir + "/numa_node") << numa << "\n";
    const std::string bdf = fs::path(path).filename();
    fs::create_directories(sys + "/bus/pci/devices");
    REQUIRE(::symlink(("../../../devices/" + path).c_str(), (sys + "/bus/pci/devices/" + bdf).c_str()) == 0);
  }
  void Nic(const std::string& path, int numa, const std::string& ifname) {
    Device(path, numa);
    const std::string net = sys + "/devices/" + path + "/net/" + ifname;
    fs::create_directories(net);
    REQUIRE(::symlink(("../../../" + fs::path(path).filename().string()).c_str(),
                      (net + "/device").c_str()) == 0);
    fs::create_directories(sys + "/class/net");
    REQUIRE(::symlink(("../../devices/" + path + "/net/" + ifname).c_str(),
                      (sys + "/class/net/" + ifname).c_str()) == 0);
    std::ofstream(net + "/carrier") << "1\n";
  }
  void Gpu(const std::string& path, int numa, const std::string& uuid, int minor) {
    Device(path, numa);
    const std::string bdf = fs::path(path).filename();
    const std::string dir = proc + "/driver/nvidia/gpus/" + bdf;
    fs::create_directories(dir);
    std::ofstream(dir + "/information")
        << "Model: \t\t NVIDIA H200\nGPU UUID: \t " << uuid << "\nBus Location: \t " << bdf
        << "\nDevice Minor: \t " << minor << "\n";
  }
  SwitchNode() {
    Gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0,
        "GPU-a5f7c1d2-0000-1111-2222-333344445555", 0);
    Nic("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0, "eth1");
    Nic("pci0000:00/0000:00:02.0/0000:05:00.0", 0, "eth2");
    Gpu("pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0", 1,
        "GPU-b6e8d2e3-0000-1111-2222-333344445555", 1);
    Nic("pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:84:00.0", 1, "eth3");
    Nic("pci0000:80/0000:80:02.0/0000:85:00.0", 1, "eth4");
    node.AddEni("eth2", "00:16:3e:10:f8:b1", "10.9.0.11/24", 201, true);
    node.AddEni("eth3", "00:16:3e:10:f8:b2", "10.9.0.12/24", 202, true);
    node.AddEni("eth4", "00:16:3e:10:f8:b3", "10.9.0.13/24", 203, true);
  }
};

std::vector<std::string> Names(const std::vector<cni::DeviceCandidate>& c) {
  std::vector<std::string> n;
  for (const auto& d : c) n.push_back(d.selector.value);
  return n;
}

}  // namespace

TEST_CASE("a pool gives each GPU the device behind its own PCIe switch first, then by level") {
  SwitchNode n;
  auto cfg = n.node.Config();
  cni::Env env = n.node.MakeEnv(cni::Command::kAdd);
  cni::Context ctx{cfg, env, *n.node.host, n.node.opener, n.node.ipam};
  ctx.sysfs_root = n.sys;
  ctx.procfs_root = n.proc;
  const conf::DevicePool pool{{"eth1", "eth2", "eth3", "eth4"}, "", ""};

  SECTION("one GPU on node 1, known by UUID: its switch's eth3 (PIX), then eth4 (PHB), then node 0's") {
    kubelet::PodAllocation gpus;
    gpus.gpus = {{"GPU-b6e8d2e3-0000-1111-2222-333344445555", {1}}};
    auto c = cni::PoolCandidates(ctx, pool, &gpus);
    REQUIRE(c.ok());
    CHECK(Names(*c) == std::vector<std::string>{"eth3", "eth4", "eth1", "eth2"});
    CHECK((*c)[0].why == "PIX to GPU 0000:83:00.0");
    CHECK((*c)[1].why == "PHB to GPU 0000:83:00.0");
    CHECK((*c)[2].why == "SYS to GPU 0000:83:00.0");
  }
  SECTION("two GPUs on both nodes: one rail each, the nearest, before any second rail") {
    kubelet::PodAllocation gpus;
    gpus.gpus = {{"GPU-a5f7c1d2-0000-1111-2222-333344445555::2", {0}},
                 {"GPU-b6e8d2e3-0000-1111-2222-333344445555", {1}}};
    auto c = cni::PoolCandidates(ctx, pool, &gpus);
    REQUIRE(c.ok());
    CHECK(Names(*c) == std::vector<std::string>{"eth1", "eth3", "eth2", "eth4"});
    CHECK((*c)[0].why == "PIX to GPU 0000:03:00.0");
    CHECK((*c)[1].why == "PIX to GPU 0000:83:00.0");
  }
  SECTION("a GPU by its index (Device Minor) and ACK's shared-GPU annotation name the same GPU") {
    kubelet::PodAllocation by_index;
    by_index.gpus = {{"1", {}}};
    auto c = cni::PoolCandidates(ctx, pool, &by_index);
    REQUIRE(c.ok());
    CHECK(Names(*c).front() == "eth3");
    cfg.runtime_config["io.kubernetes.cri.pod-annotations"] = {{"ALIYUN_COM_GPU_MEM_IDX", "0"}};
    kubelet::PodAllocation shared;
    shared.gpus = {{"GPU-b6e8d2e3-0000-1111-2222-333344445555-_-3", {1}}};
    auto s = cni::PoolCandidates(ctx, pool, &shared);
    REQUIRE(s.ok());
    CHECK(Names(*s).front() == "eth1");  // the annotation's GPU 0, not the fake ID's GPU 1
  }
  SECTION("the switch's device without carrier is passed over: the GPU gets the next nearest") {
    std::ofstream(n.sys + "/class/net/eth3/carrier") << "0\n";
    kubelet::PodAllocation gpus;
    gpus.gpus = {{"GPU-b6e8d2e3-0000-1111-2222-333344445555", {1}}};
    std::string passed;
    auto c = cni::PoolCandidates(ctx, pool, &gpus, &passed);
    REQUIRE(c.ok());
    CHECK(Names(*c) == std::vector<std::string>{"eth4", "eth1", "eth2"});
    CHECK(passed == "eth3 (link down: no carrier)");
  }
  SECTION("a MIG device cannot be mapped: the kubelet's NUMA node ranks, and says so") {
    kubelet::PodAllocation gpus;
    gpus.gpus = {{"MIG-c7f9e3f4-0000-1111-2222-333344445555", {0}}};
    auto c = cni::PoolCandidates(ctx, pool, &gpus);
    REQUIRE(c.ok());
    CHECK(Names(*c) == std::vector<std::string>{"eth1", "eth2", "eth3", "eth4"});
    CHECK((*c)[0].why.ends_with("(by NUMA node)"));
  }
}

TEST_CASE("a pool passes over a device whose name no state can hold, and says so") {
  SwitchNode n;
  // The kernel takes "w\x01x" as a name; a pool listed by vendor or driver would match it.
  n.node.AddEni("w\x01x", "00:16:3e:10:f8:b4", "10.9.0.14/24", 204, true);
  auto cfg = n.node.Config();
  cni::Env env = n.node.MakeEnv(cni::Command::kAdd);
  cni::Context ctx{cfg, env, *n.node.host, n.node.opener, n.node.ipam};
  ctx.sysfs_root = n.sys;
  ctx.procfs_root = n.proc;
  const conf::DevicePool pool{{"w\x01x", "eth2"}, "", ""};
  std::string passed_over;
  auto c = cni::PoolCandidates(ctx, pool, nullptr, &passed_over);
  REQUIRE(c.ok());
  CHECK(Names(*c) == std::vector<std::string>{"eth2"});
  CHECK(passed_over == "w\\x01x (a name erdma-cni cannot record)");
}

}  // namespace test_unit_device_choice_rails_test

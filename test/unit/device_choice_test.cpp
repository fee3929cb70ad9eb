// device.count and device.pool: the config, the pod-side names of a group's
// interfaces, and which free devices of a pool come first (cni/device/choice.h).
#include <catch2/catch.hpp>
#include <fstream>
#include <tuple>

#include "cni/device/choice.h"
#include "cni/driver/registry.h"
#include "cni/state/claim.h"
#include "test/unit/fake_node.h"
#include "test/unit/fake_sysfs.h"

namespace test_unit_device_choice_test {

using conf::DeviceSelector;
using fakenode::Node;
using nlohmann::json;

namespace {

base::Result<conf::Config> ParseDevice(const std::string& device, const std::string& mode = "move") {
  return conf::Parse(cni::Modes(), R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni","mode":")" + mode +
                                       R"(","device":)" + device + "}");
}

}  // namespace

TEST_CASE("device.count and device.pool parse into the selector, with the documented defaults") {
  auto one = ParseDevice(R"({"resource":"aliyun/erdma"})");
  REQUIRE(one.ok());
  CHECK(one->device.count == 1);
  CHECK_FALSE(one->device.Several());
  CHECK_FALSE(one->device.pool);

  auto all = ParseDevice(R"({"resource":"aliyun/erdma","count":"all"})");
  REQUIRE(all.ok());
  CHECK(all->device.all);
  CHECK(all->device.Several());

  auto pool =
      ParseDevice(R"({"pool":{"names":["eth1","eth2"],"pciVendor":"1DED","rdmaDriver":"erdma"},"count":2})");
  REQUIRE(pool.ok());
  CHECK(pool->device.by == DeviceSelector::By::kPool);
  CHECK(pool->device.Describe() == "device.pool");
  REQUIRE(pool->device.pool);
  CHECK(pool->device.pool->names == std::vector<std::string>{"eth1", "eth2"});
  CHECK(pool->device.pool->pci_vendor == "0x1ded");
  CHECK(pool->device.pool->rdma_driver == "erdma");
  CHECK(pool->device.count == 2);

  auto both = ParseDevice(R"({"resource":"aliyun/erdma","pool":{"rdmaDriver":"erdma"},"count":"all"})");
  REQUIRE(both.ok());
  CHECK(both->device.by == DeviceSelector::By::kResource);
  CHECK(both->device.value == "aliyun/erdma");
  CHECK(both->device.pool);

  auto child = ParseDevice(R"({"pool":{"names":["eth1"]}})", "macvlan");
  CHECK(child.ok());
}

TEST_CASE("device.count and device.pool refuse what they cannot do, naming the key and the fix") {
  struct Bad {
    std::string device, mode, prefix;
  };
  const Bad bad = GENERATE(values<Bad>({
      {R"({"name":"eth1","count":2})", "move", "device.count: only device.resource and device.pool"},
      {R"({"resource":"a/b","count":0})", "move", "device.count: must be a number of devices from 1 to 32"},
      {R"({"resource":"a/b","count":33})", "move", "device.count: must be a number"},
      {R"({"resource":"a/b","count":"some"})", "move", "device.count: must be"},
      {R"({"resource":"a/b","count":-1})", "move", "device.count: must be"},
      {R"({"pool":{}})", "move", "device.pool: must be an object with at least one of"},
      {R"({"pool":[]})", "move", "device.pool: must be an object"},
      {R"({"pool":{"names":[]}})", "move", "device.pool.names: must be a list of 1..64"},
      {R"({"pool":{"names":["a/b"]}})", "move", "device.pool.names: every entry must be an interface name"},
      {R"({"pool":{"pciVendor":"ded"}})", "move", "device.pool.pciVendor: must be a PCI vendor ID"},
      {R"({"pool":{"pciVendor":"0xzzzz"}})", "move", "device.pool.pciVendor: "},
      {R"({"pool":{"rdmaDriver":""}})", "move", "device.pool.rdmaDriver: must be a kernel driver name"},
      {R"({"pool":{"names":["eth1"],"speed":1}})", "move",
       "device.pool.speed: not a key of erdma-cni's device.pool"},
      {R"({"pool":{"names":["eth1"]},"name":"eth1"})", "move", "device: set exactly one of"},
      {R"({"pool":{"names":["eth1"]}})", "vf", "device.pool: mode vf takes no device from a pool"},
      {R"({"pool":{"names":["eth1"]}})", "none", "device.pool: mode none"},
  }));
  INFO(bad.device << " in mode " << bad.mode);
  auto r = ParseDevice(bad.device, bad.mode);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidConfig);
  CHECK_THAT(r.error().msg, Catch::StartsWith(bad.prefix));
}

TEST_CASE("a group's interfaces are named from the pod-side name's trailing number up") {
  CHECK(cni::MemberName("erdma0", 0) == "erdma0");
  CHECK(cni::MemberName("erdma0", 7) == "erdma7");
  CHECK(cni::MemberName("net1", 1) == "net2");
  CHECK(cni::MemberName("net9", 3) == "net12");
  CHECK(cni::MemberName("rdma", 0) == "rdma0");
  CHECK(cni::MemberName("rdma", 2) == "rdma2");
  CHECK(cni::MemberName("abcdefghijklmn9", 0) == "abcdefghijklmn9");
  CHECK(cni::MemberName("abcdefghijklmn9", 1) == "");  // "abcdefghijklmn10" is 16 bytes
  CHECK(cni::MemberName("abcdefghijklmno", 1) == "");
}

TEST_CASE(
    "a pool ranks its free devices: a GPU's NUMA node first, then by name, held and unmatched ones out") {
  Node node;
  sysfstest::FakeSysfs sys(node.dir.path + "/sys");
  node.sysfs_root = sys.root();
  // eth1 is there already; eth2..eth4 too. eth1, eth2 on NUMA 0; eth3, eth4 on 1.
  node.AddEni("eth2", "00:16:3e:10:f8:b1", "10.9.0.11/24", 201, true);
  node.AddEni("eth3", "00:16:3e:10:f8:b2", "10.9.0.12/24", 202, true);
  node.AddEni("eth4", "00:16:3e:10:f8:b3", "10.9.0.13/24", 203, true);
  node.world.AddLink(fake::World::kRoot, {0, "other0", "00:16:3e:10:f8:c0", 1500, true, ""});
  const std::vector<std::pair<std::string, std::string>> devs = {{"0000:3b:00.1", "eth1"},
                                                                 {"0000:3b:00.2", "eth2"},
                                                                 {"0000:af:00.1", "eth3"},
                                                                 {"0000:af:00.2", "eth4"},
                                                                 {"0000:af:00.3", "other0"}};
  for (const auto& [pci, name] : devs) {
    sys.AddDevice(pci, "virtio-pci");
    sys.AddNetdev(pci, name);
    std::ofstream(sys.root() + "/devices/pci0000:3a/" + pci + "/numa_node")
        << (pci[5] == 'a' ? "1\n" : "0\n");
    std::ofstream(sys.root() + "/devices/pci0000:3a/" + pci + "/vendor")
        << (name == "other0" ? "0x8086\n" : "0x1ded\n");
  }
  auto cfg = node.Config();
  cni::Env env = node.MakeEnv(cni::Command::kAdd);
  cni::Context ctx{cfg, env, *node.host, node.opener, node.ipam};
  ctx.sysfs_root = node.sysfs_root;
  ctx.procfs_root = node.dir.path + "/proc";  // no NVIDIA driver
  auto names = [](const std::vector<cni::DeviceCandidate>& c) {
    std::vector<std::string> n;
    for (const auto& d : c) n.push_back(d.selector.value);
    return n;
  };
  const conf::DevicePool by_vendor{{}, "0x1ded", ""};

  SECTION("a GPU the driver files do not map ranks by the kubelet's NUMA node 1: eth3 and eth4 first") {
    kubelet::PodAllocation gpus;
    gpus.gpu_numa_nodes = {1};
    gpus.gpus = {{"GPU-7a1b", {1}}};
    auto c = cni::PoolCandidates(ctx, by_vendor, &gpus);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth3", "eth4", "eth1", "eth2"});
    CHECK((*c)[0].why == "PHB to GPU GPU-7a1b (by NUMA node)");
    CHECK((*c)[2].why == "SYS to GPU GPU-7a1b (by NUMA node)");
  }
  SECTION("GPUs on node 0 put eth1 and eth2 first") {
    kubelet::PodAllocation gpus;
    gpus.gpu_numa_nodes = {0};
    gpus.gpus = {{"GPU-0c0d", {0}}};
    auto c = cni::PoolCandidates(ctx, by_vendor, &gpus);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth1", "eth2", "eth3", "eth4"});
  }
  SECTION("a GPU whose ID is a PCI address is located in sysfs: the devices of its NUMA node first") {
    sys.AddDevice("0000:3b:00.7", "nvidia");
    std::ofstream(sys.root() + "/devices/pci0000:3a/0000:3b:00.7/numa_node") << "1\n";
    kubelet::PodAllocation gpus;
    gpus.gpus = {{"0000:3b:00.7", {}}};
    auto c = cni::PoolCandidates(ctx, by_vendor, &gpus);
    REQUIRE(c.ok());
    // Every device of the fake tree sits on its root bus: PHB on one NUMA node.
    CHECK(names(*c) == std::vector<std::string>{"eth3", "eth4", "eth1", "eth2"});
    CHECK((*c)[0].why == "PHB to GPU 0000:3b:00.7");
  }
  SECTION("without the pod's GPUs every free device ranks alike, by name") {
    auto c = cni::PoolCandidates(ctx, by_vendor, nullptr);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth1", "eth2", "eth3", "eth4"});
    CHECK((*c)[0].why == "by name: the pod's GPUs are not known");
  }
  SECTION("an up device without carrier is passed over, saying why") {
    std::ofstream(sys.root() + "/class/net/eth2/carrier") << "0\n";
    std::string passed;
    auto c = cni::PoolCandidates(ctx, by_vendor, nullptr, &passed);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth1", "eth3", "eth4"});
    CHECK(passed.find("eth2 (link down: no carrier)") != std::string::npos);
  }
  SECTION("rdmaDriver selects the devices whose paired RDMA device's driver it names") {
    fake::RdmaWorld rdma{node.world, netlink::NetnsMode::kShared};
    node.opener.EnableRdma(&rdma);
    // eRDMA's RDMA function is a PCI device of its own, paired by its GUID.
    for (const auto& [pci, dev, guid, driver] :
         std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
             {"0000:3b:00.5", "erdma_0", "0216:3eff:fe10:f8b0", "erdma"},
             {"0000:af:00.5", "mlx5_0", "0216:3eff:fe10:f8b2", "mlx5_core"}}) {
      sys.AddDevice(pci, driver);
      sys.AddRdma(pci, dev);
      std::filesystem::create_directories(sys.root() + "/class/infiniband");
      const std::string at = sys.root() + "/devices/pci0000:3a/" + pci + "/infiniband/" + dev;
      REQUIRE(::symlink(("../../../" + pci).c_str(), (at + "/device").c_str()) == 0);
      REQUIRE(::symlink(("../../devices/pci0000:3a/" + pci + "/infiniband/" + dev).c_str(),
                        (sys.root() + "/class/infiniband/" + dev).c_str()) == 0);
      fake::RdmaDeviceSpec spec;
      spec.name = dev;
      spec.node_guid = guid;
      rdma.AddDevice(spec);
    }
    auto c = cni::PoolCandidates(ctx, conf::DevicePool{{}, "", "erdma"}, nullptr);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth1"});
    auto m = cni::PoolCandidates(ctx, conf::DevicePool{{}, "", "mlx5_core"}, nullptr);
    REQUIRE(m.ok());
    CHECK(names(*m) == std::vector<std::string>{"eth3"});
  }
  SECTION("names select, and a device another attachment holds is passed over, saying by whom") {
    cni::StateStore store(cfg.data_dir, cfg.name);
    REQUIRE(store.Prepare().ok());
    const std::string held_state = store.PathFor("holder", "net1");
    REQUIRE(base::WriteFileAtomic(held_state, "{}").ok());
    auto claim = cni::DeviceClaim::Lock(store.DevicesDir(), "eth3", 100);
    REQUIRE(claim.ok());
    REQUIRE(
        claim->SetOwner({cfg.name, "holder", "net1", held_state, "eth3", "00:16:3e:10:f8:b2", "", {}}).ok());
    std::string passed;
    auto c = cni::PoolCandidates(ctx, conf::DevicePool{{"eth3", "eth4", "other0"}, "", ""}, nullptr, &passed);
    REQUIRE(c.ok());
    CHECK(names(*c) == std::vector<std::string>{"eth4", "other0"});
    CHECK(passed == "eth3 (held by container holder)");
  }
}

TEST_CASE(
    "count all takes no more devices than a number may ask for: past kMaxDevices it is code 7 naming "
    "the bound and how many matched") {
  Node node;
  json names = json::array({"eth1"});
  for (int i = 2; i <= 40; ++i) {
    char mac[18];
    std::snprintf(mac, sizeof mac, "02:00:00:00:01:%02x", i);
    const std::string name = "eth" + std::to_string(i);
    node.world.AddLink(fake::World::kRoot, {0, name, mac, 1500, true, ""});
    names.push_back(name);
  }
  const json c = {{"cniVersion", "1.0.0"},
                  {"name", "erdma"},
                  {"type", "erdma-cni"},
                  {"device", {{"pool", {{"names", names}}}, {"count", "all"}}},
                  {"dataDir", node.dir.path}};
  auto cfg = conf::Parse(cni::Modes(), c.dump());
  REQUIRE(cfg.ok());
  cni::Env env = node.MakeEnv(cni::Command::kAdd);
  cni::Context ctx{*cfg, env, *node.host, node.opener, node.ipam};
  auto choice = cni::ChooseDevices(ctx);
  REQUIRE_FALSE(choice.ok());
  CHECK(choice.error().code == base::Code::kInvalidConfig);
  CHECK(choice.error().msg.find("matched 40 devices") != std::string::npos);
  CHECK(choice.error().msg.find(std::to_string(conf::kMaxDevices)) != std::string::npos);

  // Up to the bound, "all" takes them all.
  json fewer = c;
  fewer["device"]["pool"]["names"] =
      json(std::vector<json>(names.begin(), names.begin() + conf::kMaxDevices));
  auto cfg32 = conf::Parse(cni::Modes(), fewer.dump());
  REQUIRE(cfg32.ok());
  cni::Context ctx32{*cfg32, env, *node.host, node.opener, node.ipam};
  auto all = cni::ChooseDevices(ctx32);
  REQUIRE(all.ok());
  CHECK(all->want == conf::kMaxDevices);
}

}  // namespace test_unit_device_choice_test

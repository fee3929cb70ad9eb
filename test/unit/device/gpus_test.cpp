// cni/device/gpus.h: kubelet GPU IDs read, the NVIDIA driver's procfs files
// read, and a pod's GPUs mapped to PCI addresses.
#include "cni/device/gpus.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace test_unit_device_gpus_test {

namespace fs = std::filesystem;
using cni::GpuIdKind;

namespace {

const std::string kFixture = std::string(ERDMA_TEST_FIXTURES_DIR) + "/nvidia-h200-vm";
const std::string kH200Uuid = "GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631";
const std::string kUuidA = "GPU-11111111-2222-3333-4444-555555555555";
const std::string kUuidB = "GPU-bbbbbbbb-2222-3333-4444-555555555555";

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/erdma-gpus-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { fs::remove_all(path); }
};

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An information file as the driver prints it; "" leaves a line out.
std::string Info(const std::string& uuid, const std::string& bus, const std::string& minor) {
  std::string s = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 150\n";
  if (!uuid.empty()) s += "GPU UUID: \t " + uuid + "\n";
  s += "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n";
  if (!bus.empty()) s += "Bus Location: \t " + bus + "\n";
  if (!minor.empty()) s += "Device Minor: \t " + minor + "\n";
  return s + "GPU Excluded:\t No\n";
}

// A tree laid out like /proc, with the driver's file for each GPU.
void AddGpu(const std::string& proc, const std::string& dir, const std::string& text) {
  const std::string d = proc + "/driver/nvidia/gpus/" + dir;
  fs::create_directories(d);
  std::ofstream(d + "/information") << text;
}

std::vector<cni::NvidiaGpu> Gpus(std::initializer_list<cni::NvidiaGpu> gpus) { return gpus; }

}  // namespace

TEST_CASE("the information file of a real H200 gives its PCI address, GPU UUID and minor") {
  const std::string text = Read(kFixture + "/proc/driver/nvidia/gpus/0000:00:06.0/information");
  REQUIRE(text.find("Bus Location: \t 0000:00:06.0\n") != std::string::npos);  // the driver's tabs, kept
  auto gpu = cni::ParseNvidiaGpuInformation(text, "0000:00:06.0");
  REQUIRE(gpu.ok());
  CHECK(gpu->pci == "0000:00:06.0");
  CHECK(gpu->uuid == kH200Uuid);
  CHECK(gpu->device_minor == 0);
}

TEST_CASE("the driver's GPUs of a real H200 node are read from its procfs tree") {
  auto gpus = cni::ReadNvidiaGpus(kFixture + "/proc");
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 1);
  CHECK((*gpus)[0].pci == "0000:00:06.0");
  CHECK((*gpus)[0].uuid == kH200Uuid);
}

TEST_CASE("an information file without a GPU UUID line still gives the address and the minor") {
  auto gpu = cni::ParseNvidiaGpuInformation(Info("", "0000:3b:00.0", "3"), "0000:3b:00.0");
  REQUIRE(gpu.ok());
  CHECK(gpu->pci == "0000:3b:00.0");
  CHECK_FALSE(gpu->uuid);
  CHECK(gpu->device_minor == 3);
}

TEST_CASE("an information file with CRLF line ends reads as with LF, and an upper-case UUID is lowered") {
  std::string text = Info("GPU-AAAAAAAA-2222-3333-4444-555555555555", "0000:3B:00.0", "1");
  for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 2) text.insert(at, "\r");
  auto gpu = cni::ParseNvidiaGpuInformation(text, "0000:3b:00.0");
  REQUIRE(gpu.ok());
  CHECK(gpu->pci == "0000:3b:00.0");
  CHECK(gpu->uuid == "GPU-aaaaaaaa-2222-3333-4444-555555555555");
  CHECK(gpu->device_minor == 1);
}

TEST_CASE("without a Bus Location the directory name is the GPU's address") {
  auto gpu = cni::ParseNvidiaGpuInformation(Info(kUuidA, "", "2"), "0000:86:00.0");
  REQUIRE(gpu.ok());
  CHECK(gpu->pci == "0000:86:00.0");
  auto either = cni::ParseNvidiaGpuInformation(Info(kUuidA, "0000:86:00.0", ""), "not-a-bdf");
  REQUIRE(either.ok());
  CHECK(either->pci == "0000:86:00.0");
  CHECK_FALSE(either->device_minor);
}

TEST_CASE("an information file that is not the driver's is refused, naming the file and what is wrong") {
  struct Bad {
    std::string text, dir, cause;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"", "0000:3b:00.0", "names none of GPU UUID, Bus Location and Device Minor"},
      {"Model: \t\t NVIDIA H100\n", "0000:3b:00.0", "names none of"},
      {"hello world\n", "0000:3b:00.0", "line 1 \"hello world\" is not a \"Key: value\" line"},
      {std::string("Bus Location: \t 0000:3b:00.0\n\x01\x02\x7f", 32), "0000:3b:00.0",
       "line 2 holds a control character"},
      {"Bus Location: 0000:3b:00.0\r\rDevice Minor: 1\n", "0000:3b:00.0", "control character"},
      {": 0000:3b:00.0\n", "0000:3b:00.0", "line 1 has no key before its ':'"},
      {Info(kUuidA, "0000:3b:00.0", "1") + "Device Minor: \t 2\n", "0000:3b:00.0",
       "\"Device Minor\" given twice"},
      {Info("GPU-123", "0000:3b:00.0", "1"), "0000:3b:00.0", "GPU UUID \"GPU-123\" is not GPU-<uuid>"},
      {Info(kUuidA + "::1", "0000:3b:00.0", "1"), "0000:3b:00.0", "is not GPU-<uuid>"},
      {Info(kUuidA, "0000:3b:00.0", "x1"), "0000:3b:00.0",
       "Device Minor \"x1\" is not a number from 0 to 247"},
      {Info(kUuidA, "0000:3b:00.0", "255"), "0000:3b:00.0", "Device Minor \"255\""},
      {Info(kUuidA, "somewhere", "1"), "0000:3b:00.0", "Bus Location \"somewhere\" is not a PCI address"},
      {Info(kUuidA, "", "1"), "gpu0", "has no Bus Location, and its directory is not a PCI address"},
      {std::string(5000, 'x'), "0000:3b:00.0", "larger than 4096 bytes"},
  }));
  auto gpu = cni::ParseNvidiaGpuInformation(bad.text, bad.dir);
  REQUIRE_FALSE(gpu.ok());
  CHECK(gpu.error().code == base::Code::kDecoding);
  CHECK_THAT(gpu.error().msg, Catch::Contains("NVIDIA driver file " + bad.dir + "/information: "));
  CHECK_THAT(gpu.error().msg, Catch::Contains(bad.cause));
  CHECK_THAT(gpu.error().msg, Catch::Contains("report the file's content"));
}

TEST_CASE("a Bus Location other than the GPU's directory is refused") {
  auto gpu = cni::ParseNvidiaGpuInformation(Info(kUuidA, "0000:3c:00.0", "1"), "0000:3b:00.0");
  REQUIRE_FALSE(gpu.ok());
  CHECK_THAT(gpu.error().msg,
             Catch::Contains("0000:3b:00.0/information: Bus Location 0000:3c:00.0 is not the "
                             "GPU its directory names"));
}

TEST_CASE("the driver's GPUs are read in address order, skipping entries that name no GPU") {
  Dir d;
  AddGpu(d.path, "0000:86:00.0", Info(kUuidB, "0000:86:00.0", "1"));
  AddGpu(d.path, "0000:3b:00.0", Info(kUuidA, "0000:3b:00.0", "0"));
  AddGpu(d.path, "0000:3B:00.0", Info(kUuidA, "0000:3b:00.0", "0"));  // not the driver's spelling
  AddGpu(d.path, "stats", "whatever\n");
  fs::create_directories(d.path + "/driver/nvidia/gpus/0000:af:00.0");  // gone meanwhile: no file
  auto gpus = cni::ReadNvidiaGpus(d.path);
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 2);
  CHECK((*gpus)[0].pci == "0000:3b:00.0");
  CHECK((*gpus)[1].pci == "0000:86:00.0");
  CHECK((*gpus)[1].device_minor == 1);
}

TEST_CASE("a node without the NVIDIA driver has no driver GPUs, and a bad file fails the read") {
  Dir d;
  auto none = cni::ReadNvidiaGpus(d.path);
  REQUIRE(none.ok());
  CHECK(none->empty());

  AddGpu(d.path, "0000:3b:00.0", Info(kUuidA, "0000:3b:00.0", "0"));
  AddGpu(d.path, "0000:86:00.0", Info(kUuidB, "0000:87:00.0", "1"));
  auto bad = cni::ReadNvidiaGpus(d.path);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().msg, Catch::StartsWith("reading " + d.path +
                                                "/driver/nvidia/gpus: NVIDIA driver file "
                                                "0000:86:00.0/information: Bus Location 0000:87:00.0"));
}

TEST_CASE("every form of GPU ID the kubelet may report is told apart") {
  auto uuid = cni::ParseGpuId(kH200Uuid);
  CHECK(uuid.kind == GpuIdKind::kUuid);
  CHECK(uuid.uuid == kH200Uuid);
  CHECK(uuid.replica == -1);

  auto upper = cni::ParseGpuId("GPU-A5F78F7D-65BB-83F1-ECE1-54CA1B5DD631");
  CHECK(upper.kind == GpuIdKind::kUuid);
  CHECK(upper.uuid == kH200Uuid);

  auto replica = cni::ParseGpuId(kH200Uuid + "::3");
  CHECK(replica.kind == GpuIdKind::kReplica);
  CHECK(replica.uuid == kH200Uuid);
  CHECK(replica.replica == 3);

  auto ack = cni::ParseGpuId(kH200Uuid + "-_-12");
  CHECK(ack.kind == GpuIdKind::kAckShared);
  CHECK(ack.uuid == kH200Uuid);
  CHECK(ack.replica == 12);

  for (const std::string mig :
       {"MIG-0d6bcd5b-cafe-5b8a-9c0e-1f2d3e4f5a6b", "MIG-GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631/1/0"}) {
    auto m = cni::ParseGpuId(mig);
    CHECK(m.kind == GpuIdKind::kMig);
    CHECK(m.uuid == mig);
  }
  auto mig_replica = cni::ParseGpuId("MIG-0d6bcd5b-cafe-5b8a-9c0e-1f2d3e4f5a6b::1");
  CHECK(mig_replica.kind == GpuIdKind::kMig);
  CHECK(mig_replica.uuid == "MIG-0d6bcd5b-cafe-5b8a-9c0e-1f2d3e4f5a6b");
  CHECK(mig_replica.replica == 1);

  for (const std::string pci : {"0000:3b:00.0", "3b:00.0", "0000:3B:00.0"}) {
    auto p = cni::ParseGpuId(pci);
    CHECK(p.kind == GpuIdKind::kPci);
    CHECK(p.pci == "0000:3b:00.0");
  }

  auto index = cni::ParseGpuId("3");
  CHECK(index.kind == GpuIdKind::kIndex);
  CHECK(index.index == 3);
  CHECK(cni::ParseGpuId("247").index == 247);
}

TEST_CASE("an ID of no known form is unknown with the reason, never a crash") {
  struct Bad {
    std::string id, problem;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"", "an empty GPU ID"},
      {"GPU-123", "a GPU UUID is GPU- and 8-4-4-4-12 hex digits"},
      {"GPU-g5f78f7d-65bb-83f1-ece1-54ca1b5dd631", "8-4-4-4-12 hex digits"},
      {"GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631-_-", "8-4-4-4-12 hex digits"},
      {"GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631-_-1::2", "8-4-4-4-12 hex digits"},
      {"GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631::", "a replica ID ends in ::<n>"},
      {"GPU-a5f78f7d-65bb-83f1-ece1-54ca1b5dd631::x", "a replica ID ends in ::<n>"},
      {"MIG-1/2", "a MIG UUID is MIG- and 8-4-4-4-12 hex digits"},
      {"nvidia0::1", "only a GPU or MIG UUID has replicas"},
      {"248", "index 248 is past /dev/nvidia247"},
      {"-1", "not a GPU UUID"},
      {"nvidia.com/gpu", "not a GPU UUID"},
      {"erdma_0/3", "not a GPU UUID"},
      {std::string(257, 'a'), "longer than 256 bytes"},
  }));
  auto g = cni::ParseGpuId(bad.id);
  CHECK(g.kind == GpuIdKind::kUnknown);
  CHECK_THAT(g.problem, Catch::Contains(bad.problem));
  CHECK(g.id.size() <= cni::kMaxGpuIdBytes + 3);
}

TEST_CASE("a pod's GPUs map by UUID to their driver files, and replicas of one GPU are one GPU") {
  const auto driver = Gpus({{"0000:3b:00.0", kUuidA, 0}, {"0000:86:00.0", kUuidB, 1}});
  auto pod = cni::MapPodGpus({kUuidB + "::0", kUuidA, kUuidB + "::1", kUuidB + "::0"}, driver, "");
  REQUIRE(pod.size() == 2);
  CHECK(pod[0].pci == "0000:86:00.0");
  CHECK(pod[0].ids == std::vector<std::string>{kUuidB + "::0", kUuidB + "::1"});
  CHECK(pod[0].why == kUuidB + "::0 is 0000:86:00.0 (driver file)");
  CHECK(pod[1].pci == "0000:3b:00.0");
  CHECK(pod[1].why == kUuidA + " is 0000:3b:00.0 (driver file)");
}

TEST_CASE("an index maps through Device Minor where the driver file has no UUID") {
  const auto driver = Gpus({{"0000:3b:00.0", std::nullopt, 2}, {"0000:86:00.0", std::nullopt, 3}});
  auto pod = cni::MapPodGpus({"3", "0000:86:00.0", "7", kUuidA}, driver, "");
  REQUIRE(pod.size() == 3);
  CHECK(pod[0].pci == "0000:86:00.0");
  CHECK(pod[0].ids == std::vector<std::string>{"3", "0000:86:00.0"});
  CHECK(pod[0].why == "index 3 is /dev/nvidia3 = 0000:86:00.0 (driver file)");
  CHECK(pod[1].pci.empty());
  CHECK(pod[1].why ==
        "index 7: no driver file has Device Minor 7 (/dev/nvidia7); falling back to the kubelet's NUMA node");
  CHECK(pod[2].pci.empty());
  CHECK(pod[2].why == kUuidA +
                          ": no driver file has this GPU UUID (2 listed, 2 without a UUID); falling back to "
                          "the kubelet's NUMA node");
}

TEST_CASE("ACK shared-GPU IDs take their GPUs from ALIYUN_COM_GPU_MEM_IDX, not from the UUID inside") {
  const auto driver = Gpus({{"0000:3b:00.0", kUuidA, 0}, {"0000:86:00.0", kUuidB, 1}});
  const std::vector<std::string> ids = {kUuidA + "-_-0", kUuidA + "-_-1", kUuidA + "-_-2"};
  auto one = cni::MapPodGpus(ids, driver, "1");
  REQUIRE(one.size() == 1);
  CHECK(one[0].pci == "0000:86:00.0");
  CHECK(one[0].ids == std::vector<std::string>{"ALIYUN_COM_GPU_MEM_IDX=1"});
  CHECK(one[0].why == "ACK shared GPU ALIYUN_COM_GPU_MEM_IDX=1 is /dev/nvidia1 = 0000:86:00.0 (driver file)");

  auto two = cni::MapPodGpus(ids, driver, "1, 0,1");
  REQUIRE(two.size() == 2);
  CHECK(two[0].pci == "0000:86:00.0");
  CHECK(two[1].pci == "0000:3b:00.0");

  // Without a fake ID among them the annotation is someone else's business.
  auto plain = cni::MapPodGpus({kUuidA}, driver, "1");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].pci == "0000:3b:00.0");
}

TEST_CASE("ACK shared-GPU IDs without a usable annotation map their UUID, saying it may be wrong") {
  const auto driver = Gpus({{"0000:3b:00.0", kUuidA, 0}});
  auto none = cni::MapPodGpus({kUuidA + "-_-0", kUuidA + "-_-1"}, driver, "");
  REQUIRE(none.size() == 1);
  CHECK(none[0].pci == "0000:3b:00.0");
  CHECK(none[0].ids.size() == 2);
  CHECK(none[0].why == kUuidA +
                           "-_-0 (an ACK shared-GPU ID, whose UUID need not be the pod's GPU: the pod has no "
                           "ALIYUN_COM_GPU_MEM_IDX annotation) is 0000:3b:00.0 (driver file)");

  auto garbled = cni::MapPodGpus({kUuidA + "-_-0"}, driver, "1;rm");
  REQUIRE(garbled.size() == 1);
  CHECK(garbled[0].pci == "0000:3b:00.0");
  CHECK_THAT(garbled[0].why, Catch::Contains("ALIYUN_COM_GPU_MEM_IDX \"1;rm\" is not a list of GPU indexes"));
  CHECK(cni::MapPodGpus({kUuidA + "-_-0"}, driver, "248")[0].why.find("is not a list") != std::string::npos);
}

TEST_CASE("a MIG device, an unknown ID and a node without driver files fall back to NUMA, saying why") {
  const auto driver = Gpus({{"0000:3b:00.0", kUuidA, 0}});
  const std::string mig = "MIG-0d6bcd5b-cafe-5b8a-9c0e-1f2d3e4f5a6b";
  auto pod = cni::MapPodGpus({mig + "::0", mig + "::1", "bad\nid"}, driver, "");
  REQUIRE(pod.size() == 2);
  CHECK(pod[0].pci.empty());
  CHECK(pod[0].ids.size() == 2);
  CHECK(pod[0].why == mig + "::0: a MIG device needs NVML to map; falling back to the kubelet's NUMA node");
  CHECK(pod[1].pci.empty());
  CHECK_THAT(pod[1].why, Catch::StartsWith("bad\\nid: not a GPU UUID"));  // escaped for the log

  auto bare = cni::MapPodGpus({kUuidA, "2", "0000:3b:00.0"}, {}, "");
  REQUIRE(bare.size() == 3);
  CHECK(bare[0].why == kUuidA +
                           ": no NVIDIA driver files list a GPU (driver/nvidia/gpus); falling back to the "
                           "kubelet's NUMA node");
  CHECK(bare[1].why ==
        "index 2: no NVIDIA driver files list a GPU (driver/nvidia/gpus); falling back to the "
        "kubelet's NUMA node");
  CHECK(bare[2].pci == "0000:3b:00.0");  // a PCI address needs no driver file
  CHECK(bare[2].why == "0000:3b:00.0 is the PCI address 0000:3b:00.0");
}

TEST_CASE("a pod's GPUs read from a procfs tree without the NVIDIA driver are unmapped") {
  Dir d;
  fs::create_directories(d.path + "/driver");
  auto driver = cni::ReadNvidiaGpus(d.path);
  REQUIRE(driver.ok());
  auto pod = cni::MapPodGpus({kH200Uuid}, *driver, "");
  REQUIRE(pod.size() == 1);
  CHECK(pod[0].pci.empty());
  CHECK_THAT(pod[0].why, Catch::Contains("no NVIDIA driver files list a GPU"));
}

}  // namespace test_unit_device_gpus_test

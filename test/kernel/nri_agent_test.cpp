// The NRI agent (erdma-cni-nri) as a node runs it, against a runtime written here: the test listens on a
// unix socket and speaks the runtime's side of NRI (nri/frame.h, nri/messages.h; the CreateContainer
// requests written by hand from protobuf's wire format). The attached pod is what the plugin's ADD leaves,
// written by the plugin's own writers (its attachment record and state); the device nodes come from a sysfs
// tree laid out by the test, the GPUs from a procfs tree (ERDMA_CNI_TEST_SYSFS, ERDMA_CNI_TEST_PROCFS: test
// builds only).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/fault.h"
#include "harness.h"
#include "nri/frame.h"
#include "nri/messages.h"
#include "nri/session.h"
#include "skip.h"
#include "test/nri_runtime.h"

namespace test_kernel_nri_agent_test {

namespace fs = std::filesystem;

namespace {

using nri_runtime::Len;
using nri_runtime::Runtime;

std::string CreateContainerRequest(const std::string& sandbox, const std::string& pod_name) {
  return nri_runtime::CreateContainerRequest(sandbox, pod_name, "ml", "ctr-" + sandbox, "trainer");
}

// The erdma-cni-nri of a node (its node file under `dir`, the sysfs and procfs trees there), connected to
// the runtime's end played here and registered.
struct Agent {
  pid_t pid = -1;
  Runtime rt;
  std::string log;

  Agent(const std::string& dir, std::vector<std::string> env, std::vector<std::string> args) {
    const std::string sock = dir + "/nri.sock";
    log = dir + "/agent.log";
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, sock.data(), sock.size());
    REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    args.insert(args.begin(), {ERDMA_CNI_NRI_BIN, "--socket", sock});
    args.emplace_back("--once");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    REQUIRE(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&fa);

    pollfd p{listener, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10000) == 1);
    rt.fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(listener);
    REQUIRE(rt.fd >= 0);
    // Registration on the runtime's connection.
    const nri::Received reg = rt.Next();
    CHECK(reg.conn == nri::kRuntimeConn);
    auto reg_req = nri::DecodeRequest(reg.msg.payload);
    REQUIRE(reg_req.ok());
    CHECK(reg_req->method == "RegisterPlugin");
    CHECK(reg_req->payload == nri::EncodeRegisterPlugin("erdma-cni", "50"));
    rt.Send(nri::kRuntimeConn, {reg.msg.stream, nri::TtrpcType::kResponse, 0, nri::EncodeResponse({})});
  }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  ~Agent() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // The runtime goes away: the agent (--once) ends; its exit status and its log.
  std::pair<int, std::string> End() {
    ::close(rt.fd);
    rt.fd = -1;
    int status = -1;
    pid_t done = 0;
    for (int i = 0; i < 500 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; ++i) ::usleep(10000);
    REQUIRE(done == pid);
    pid = -1;
    REQUIRE(WIFEXITED(status));
    std::ifstream in(log);
    return {WEXITSTATUS(status),
            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
  }
};

// The kernel's side of RDMA device `ibdev`: its uverbs entry and rdma_cm, under `sysfs`.
void RdmaDevice(const std::string& sysfs, const std::string& uverbs, const std::string& ibdev,
                const std::string& dev) {
  fs::create_directories(sysfs + "/class/infiniband_verbs/" + uverbs);
  std::ofstream(sysfs + "/class/infiniband_verbs/" + uverbs + "/ibdev") << ibdev << "\n";
  std::ofstream(sysfs + "/class/infiniband_verbs/" + uverbs + "/dev") << dev << "\n";
  fs::create_directories(sysfs + "/class/misc/rdma_cm");
  std::ofstream(sysfs + "/class/misc/rdma_cm/dev") << "10:58\n";
}

// A PCI function on a VM's root bus, without a NUMA node, as sysfs lays it out.
std::string FlatPci(const std::string& sysfs, const std::string& bdf) {
  const std::string at = sysfs + "/devices/pci0000:00/" + bdf;
  fs::create_directories(at);
  std::ofstream(at + "/numa_node") << "-1\n";
  fs::create_directories(sysfs + "/bus/pci/devices");
  fs::create_directory_symlink(at, sysfs + "/bus/pci/devices/" + bdf);
  return at;
}

}  // namespace

TEST_CASE(
    "the NRI agent registers, subscribes, and gives an attached pod's container its rail, others nothing") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  kt::TempDir d;
  const std::string sysfs = d.path() + "/sys";
  RdmaDevice(sysfs, "uverbs0", "erdma_0", "231:192");
  // The node file, and what the plugin's ADD of sandbox "attached" left.
  const std::string data = d.path() + "/data", records = d.path() + "/attachments";
  const std::string node_file = d.path() + "/node.json";
  kt::WriteNodeFile(node_file, nlohmann::json{{"dataDirs", {data}}, {"attachmentsDir", records}}.dump());
  nri_runtime::WriteAttachedPod(data, records, "attached", "erdma_0");

  Agent agent(d.path(), {"ERDMA_CNI_NODE_CONFIG=" + node_file, "ERDMA_CNI_TEST_SYSFS=" + sysfs},
              {"--memlock", "unlimited", "--topology-dir", d.path() + "/topo"});
  Runtime& rt = agent.rt;
  CHECK(rt.Call("Configure", "") == nri::Response{0, "", nri::EncodeConfigureResponse(nri::kSubscribed)});
  CHECK(rt.Call("Synchronize", "").code == 0);
  double attached_ms = 0, plain_ms = 0;
  const nri::Response attached =
      rt.Call("CreateContainer", CreateContainerRequest("attached", "trainer-0"), &attached_ms);
  const nri::Response plain = rt.Call("CreateContainer", CreateContainerRequest("plain", "web-0"), &plain_ms);
  REQUIRE(attached.code == 0);
  auto a = nri::DecodeCreateContainerResponse(attached.payload);
  REQUIRE(a.ok());
  CHECK(a->rlimits == std::vector<nri::Rlimit>{{"RLIMIT_MEMLOCK", nri::kUnlimited, nri::kUnlimited}});
  REQUIRE(a->devices.size() == 2);
  CHECK(a->devices[0].path == "/dev/infiniband/uverbs0");
  CHECK(a->devices[0].major == 231);
  CHECK(a->devices[0].minor == 192);
  CHECK(a->devices[1].path == "/dev/infiniband/rdma_cm");
  CHECK(a->env == std::vector<std::pair<std::string, std::string>>{{"NCCL_IB_HCA", "=erdma_0:1"}});
  CHECK(a->mounts.empty());  // no GPU: no topology file
  CHECK(plain == nri::Response{0, "", ""});
  WARN("CreateContainer answered in " << attached_ms << " ms (attached pod), " << plain_ms
                                      << " ms (plain pod)");

  const auto [status, text] = agent.End();
  CHECK(status == 0);
  CHECK_THAT(text, Catch::Contains("pod ml/trainer-0 container trainer: RLIMIT_MEMLOCK="));
  CHECK_THAT(text, Catch::Contains("closed the NRI connection after 4 request(s)"));
}

TEST_CASE(
    "on a flat topology the agent writes a GPU container's NCCL topology file and removes it with its pod") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  kt::TempDir d;
  // A VM's node: two eRDMA functions and two GPUs on its one root bus.
  const std::string sysfs = d.path() + "/sys", procfs = d.path() + "/proc";
  for (auto [uverbs, ibdev, dev, bdf] : {std::tuple{"uverbs0", "erdma_0", "231:192", "0000:00:07.0"},
                                         std::tuple{"uverbs1", "erdma_1", "231:193", "0000:00:09.0"}}) {
    RdmaDevice(sysfs, uverbs, ibdev, dev);
    fs::create_directory_symlink(FlatPci(sysfs, bdf),
                                 sysfs + "/class/infiniband_verbs/" + uverbs + "/device");
  }
  for (auto [bdf, minor] : {std::pair{"0000:00:06.0", 0}, std::pair{"0000:00:08.0", 1}}) {
    FlatPci(sysfs, bdf);
    fs::create_directories(procfs + "/driver/nvidia/gpus/" + bdf);
    std::ofstream(procfs + "/driver/nvidia/gpus/" + bdf + "/information")
        << "Model: \t\t NVIDIA H20\nBus Location: \t " << bdf << "\nDevice Minor: \t " << minor << "\n";
  }
  const std::string data = d.path() + "/data", records = d.path() + "/attachments", topo = d.path() + "/topo";
  const std::string node_file = d.path() + "/node.json";
  kt::WriteNodeFile(node_file, nlohmann::json{{"dataDirs", {data}}, {"attachmentsDir", records}}.dump());
  // The pod's rails: erdma_1 (its first interface), then erdma_0.
  nri_runtime::WriteAttachedPod(data, records, "gpu-pod", "erdma_1", "eth0");
  nri_runtime::WriteAttachedPod(data, records, "gpu-pod", "erdma_0", "net2");
  // A file of a pod the runtime no longer has, from before a restart.
  fs::create_directories(topo + "/gone-pod");
  std::ofstream(topo + "/gone-pod/ctr-x.xml") << "<system/>\n";

  Agent agent(d.path(),
              {"ERDMA_CNI_NODE_CONFIG=" + node_file, "ERDMA_CNI_TEST_SYSFS=" + sysfs,
               "ERDMA_CNI_TEST_PROCFS=" + procfs},
              {"--topology-dir", topo});
  Runtime& rt = agent.rt;
  CHECK(rt.Call("Configure", "").code == 0);
  // SynchronizeRequest: pods = 1 (PodSandbox, id = 1).
  CHECK(rt.Call("Synchronize", Len(1, Len(1, "gpu-pod"))).code == 0);
  CHECK_FALSE(fs::exists(topo + "/gone-pod"));

  // The trainer: both GPUs as a device plugin gives them (/dev/nvidiaN, 195:N); LinuxDevice: path = 1,
  // type = 2, major = 3, minor = 4.
  auto nvidia = [](int minor) {
    return Len(2, Len(1, "/dev/nvidia" + std::to_string(minor)) + Len(2, "c") +
                      std::string("\x18\xc3\x01", 3) + std::string("\x20", 1) +
                      std::string(1, static_cast<char>(minor)));
  };
  const std::string trainer =
      Len(1, Len(1, "gpu-pod") + Len(2, "trainer-0") + Len(4, "ml")) +
      Len(2, Len(1, "ctr-train") + Len(2, "gpu-pod") + Len(3, "trainer") + Len(11, nvidia(1) + nvidia(0)));
  auto a = nri::DecodeCreateContainerResponse(rt.Call("CreateContainer", trainer).payload);
  REQUIRE(a.ok());
  const std::string file = topo + "/gpu-pod/ctr-train.xml";
  CHECK(a->mounts ==
        std::vector<nri::MountSpec>{{"/run/erdma-cni/nccl-topo.xml", "bind", file, {"bind", "ro"}}});
  CHECK(a->env ==
        std::vector<std::pair<std::string, std::string>>{{"NCCL_IB_HCA", "=erdma_1:1,erdma_0:1"},
                                                         {"NCCL_TOPO_FILE", "/run/erdma-cni/nccl-topo.xml"}});
  std::ifstream in(file);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Rail order: erdma_1 (0000:00:09.0) with the first GPU, erdma_0 (0000:00:07.0) with the second.
  CHECK(xml ==
        "<system version=\"1\">\n"
        "  <cpu numaid=\"-1\">\n"
        "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "      <pci busid=\"0000:00:09.0\"/>\n"
        "      <pci busid=\"0000:00:06.0\"/>\n"
        "    </pci>\n"
        "    <pci busid=\"ffff:ff:02.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
        "      <pci busid=\"0000:00:07.0\"/>\n"
        "      <pci busid=\"0000:00:08.0\"/>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n");

  // A sidecar of the same pod without a GPU gets no file.
  auto side = nri::DecodeCreateContainerResponse(
      rt.Call("CreateContainer", CreateContainerRequest("gpu-pod", "trainer-0")).payload);
  REQUIRE(side.ok());
  CHECK(side->mounts.empty());
  CHECK(fs::exists(file));

  // The pod goes (StateChangeEvent: event = 1, REMOVE_POD_SANDBOX = 3; pod = 2): its files go with it.
  CHECK(rt.Call("StateChange", std::string("\x08\x03", 2) + Len(2, Len(1, "gpu-pod"))).code == 0);
  CHECK_FALSE(fs::exists(topo + "/gpu-pod"));
  const auto [status, text] = agent.End();
  CHECK(status == 0);
  CHECK_THAT(text, Catch::Contains(file + " at /run/erdma-cni/nccl-topo.xml"));
}

}  // namespace test_kernel_nri_agent_test

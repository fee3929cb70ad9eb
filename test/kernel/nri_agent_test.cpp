// The NRI agent (erdma-cni-nri) as a node runs it, against a runtime written here: the test listens on a
// unix socket and speaks the runtime's side of NRI (nri/frame.h, nri/messages.h; the CreateContainer
// requests written by hand from protobuf's wire format). The attached pod is what the plugin's ADD leaves,
// written by the plugin's own writers (its attachment record and state); the device nodes come from a sysfs
// tree laid out by the test (ERDMA_CNI_TEST_SYSFS, test builds only).
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

using nri_runtime::Runtime;

std::string CreateContainerRequest(const std::string& sandbox, const std::string& pod_name) {
  return nri_runtime::CreateContainerRequest(sandbox, pod_name, "ml", "ctr-" + sandbox, "trainer");
}

}  // namespace

TEST_CASE(
    "the NRI agent registers, subscribes, and gives an attached pod's container its rail, others nothing") {
  if (!base::fault::kEnabled) KT_SKIP("ERDMA_CNI_TEST_SYSFS: build with -DERDMA_CNI_FAULT_HOOKS=ON");
  kt::TempDir d;
  // The kernel's side: erdma_0's uverbs node and rdma_cm.
  const std::string sysfs = d.path() + "/sys";
  fs::create_directories(sysfs + "/class/infiniband_verbs/uverbs0");
  std::ofstream(sysfs + "/class/infiniband_verbs/uverbs0/ibdev") << "erdma_0\n";
  std::ofstream(sysfs + "/class/infiniband_verbs/uverbs0/dev") << "231:192\n";
  fs::create_directories(sysfs + "/class/misc/rdma_cm");
  std::ofstream(sysfs + "/class/misc/rdma_cm/dev") << "10:58\n";
  // The node file, and what the plugin's ADD of sandbox "attached" left.
  const std::string data = d.path() + "/data", records = d.path() + "/attachments";
  const std::string node_file = d.path() + "/node.json";
  kt::WriteNodeFile(node_file, nlohmann::json{{"dataDirs", {data}}, {"attachmentsDir", records}}.dump());
  nri_runtime::WriteAttachedPod(data, records, "attached", "erdma_0");

  // The runtime's socket, and the agent connecting to it.
  const std::string sock = d.path() + "/nri.sock", log = d.path() + "/agent.log";
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
  const std::string env_node = "ERDMA_CNI_NODE_CONFIG=" + node_file,
                    env_sys = "ERDMA_CNI_TEST_SYSFS=" + sysfs;
  std::vector<char*> env = {const_cast<char*>(env_node.c_str()), const_cast<char*>(env_sys.c_str()), nullptr};
  std::vector<std::string> args = {ERDMA_CNI_NRI_BIN, "--socket", sock, "--memlock", "unlimited", "--once"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t agent = -1;
  REQUIRE(::posix_spawn(&agent, argv[0], &fa, nullptr, argv.data(), env.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } reap{agent};

  pollfd p{listener, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  Runtime rt;
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
  CHECK(plain == nri::Response{0, "", ""});
  WARN("CreateContainer answered in " << attached_ms << " ms (attached pod), " << plain_ms
                                      << " ms (plain pod)");

  // The runtime goes away: the agent (--once) ends, saying so.
  ::close(rt.fd);
  rt.fd = -1;
  int status = -1;
  pid_t done = 0;
  for (int i = 0; i < 500 && (done = ::waitpid(agent, &status, WNOHANG)) == 0; ++i) ::usleep(10000);
  REQUIRE(done == agent);
  reap.pid = -1;
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("pod ml/trainer-0 container trainer: RLIMIT_MEMLOCK="));
  CHECK_THAT(text, Catch::Contains("closed the NRI connection after 4 request(s)"));
}

}  // namespace test_kernel_nri_agent_test

// erdma-bench-nri: what the NRI agent costs a runtime. Runs erdma-cni-nri against a runtime written here
// (a unix socket speaking the runtime's side of NRI, as test/kernel/nri_agent_test.cpp does), with one
// attached pod written by the plugin's own writers, and times each CreateContainer round trip: a
// container of the attached pod and one of a plain pod, alternately. Prints the median and p99 of each,
// and the agent's resident memory after the run (VmRSS, VmHWM). docs/nri.md holds the figures.
//
//   erdma-bench-nri [--agent PATH] [--requests N]
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nri/frame.h"
#include "nri/messages.h"
#include "test/nri_runtime.h"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void Die(const std::string& what) { throw std::runtime_error(what); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string StatusField(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", key.size() + 1));
  return "?";
}

int Run(const std::string& agent, int requests) {
  const fs::path dir = fs::temp_directory_path() / ("erdma-bench-nri." + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { fs::remove_all(d); }
  } cleanup{dir};
  const std::string data = dir / "data", records = dir / "attachments", node_file = dir / "node.json";
  std::ofstream(node_file) << R"({"dataDirs": [")" << data << R"("], "attachmentsDir": ")" << records
                           << R"(", "nriMemlock": "unlimited"})";
  fs::permissions(node_file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                 fs::perms::others_read);
  nri_runtime::WriteAttachedPod(data, records, "attached", "erdma_0");

  const std::string sock = dir / "nri.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.data(), std::min(sock.size(), sizeof addr.sun_path - 1));
  if (::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1) != 0)
    Die("listen on " + sock);
  const std::string env_node = "ERDMA_CNI_NODE_CONFIG=" + node_file;
  std::vector<char*> env = {const_cast<char*>(env_node.c_str()), nullptr};
  std::vector<std::string> args = {agent, "--socket", sock, "--topology-dir", dir / "topo"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = dir / "agent.log";
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), env.data()) != 0) Die("spawn " + agent);
  posix_spawn_file_actions_destroy(&fa);
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{pid};

  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, 10000) != 1) Die("the agent did not connect within 10 s");
  nri_runtime::Runtime rt;
  rt.fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(listener);
  const nri::Received reg = rt.Next();
  rt.Send(nri::kRuntimeConn, {reg.msg.stream, nri::TtrpcType::kResponse, 0, nri::EncodeResponse({})});
  rt.Call("Configure", "");
  rt.Call("Synchronize", "");

  std::vector<double> attached, plain;
  for (int i = 0; i < requests; ++i) {
    const bool ours = i % 2 == 0;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string sandbox = ours ? "attached" : "plain";
    const nri::Response r =
        rt.Call("CreateContainer", nri_runtime::CreateContainerRequest(sandbox, sandbox + "-pod", "bench",
                                                                       "ctr-" + std::to_string(i), "c"));
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (r.code != 0 || (ours == r.payload.empty()))
      Die("CreateContainer " + std::to_string(i) + ": unexpected answer");
    (ours ? attached : plain).push_back(us);
  }
  std::printf("erdma-bench-nri: %d CreateContainer round trips on a unix socket, alternately\n", requests);
  std::printf("  %-40s median %7.1f us   p99 %7.1f us\n",
              "a container of the attached pod:", Percentile(attached, 0.5), Percentile(attached, 0.99));
  std::printf("  %-40s median %7.1f us   p99 %7.1f us\n",
              "a container of a plain pod:", Percentile(plain, 0.5), Percentile(plain, 0.99));
  std::printf("  the agent's memory after the run: VmRSS %s, VmHWM %s\n", StatusField(pid, "VmRSS").c_str(),
              StatusField(pid, "VmHWM").c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string agent = ERDMA_CNI_NRI_BIN;
  int requests = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--agent" && i + 1 < argc) {
      agent = argv[++i];
    } else if (a == "--requests" && i + 1 < argc) {
      requests = std::max(2, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: erdma-bench-nri [--agent PATH] [--requests N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    return Run(agent, requests);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "erdma-bench-nri: %s\n", e.what());
    return 1;
  }
}

#include "integration/bench/kubelet.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/bench/calls.h"
#include "integration/bench/topology.h"

namespace bench {

namespace {

nlohmann::json json_array() { return nlohmann::json::array(); }

bool Answers(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string FakeKubelet::Start(const std::string& device) {
#ifndef ERDMA_CNI_SOURCE_DIR
  return "the bench was built without the source tree's path";
#else
  const std::string script = std::string(ERDMA_CNI_SOURCE_DIR) + "/test/fake_kubelet/fake_kubelet.py";
  if (::access(script.c_str(), R_OK) != 0) return script + " is missing";
  // Debian's python3, which has python3-grpcio; not whatever python3 is first on PATH.
  if (std::system("/usr/bin/python3 -c 'import grpc, grpc_tools' >/dev/null 2>&1") != 0)
    return "python3-grpcio and python3-grpc-tools are not installed (Debian's /usr/bin/python3)";
  char tmpl[] = "/tmp/erdma-bench-kubelet-XXXXXX";
  if (!::mkdtemp(tmpl)) return "mkdtemp failed";
  dir_ = tmpl;
  const nlohmann::json pods = {{"pods",
                                {{{"namespace", "bench"},
                                  {"name", "pod"},
                                  {"containers",
                                   {{{"name", "main"},
                                     {"devices",
                                      {{{"resource", kKubeletResource}, {"ids", {device}}, {"numa", {0}}},
                                       {{"resource", "nvidia.com/gpu"},
                                        {"ids", {"GPU-a5f7c1d2-0000-1111-2222-333344445555"}},
                                        {"numa", {0}}}}}}}}},
                                 // A pod that asked for no device: what a chained entry passes through.
                                 {{"namespace", "bench"},
                                  {"name", "plain"},
                                  {"containers", {{{"name", "main"}, {"devices", json_array()}}}}}}}};
  std::ofstream(dir_ + "/pods.json") << pods.dump();
  const std::string& sock = KubeletSocketPath();
  ::unlink(sock.c_str());
  pid_ = ::fork();
  if (pid_ < 0) return "fork failed";
  if (pid_ == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    const std::string pods_file = dir_ + "/pods.json", stubs = dir_ + "/stubs";
    // argv[0] too: python takes sys.executable from it (through PATH).
    ::execl("/usr/bin/python3", "/usr/bin/python3", script.c_str(), "--socket", sock.c_str(), "--pods",
            pods_file.c_str(), "--mode", "get", "--stubs", stubs.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Generating the stubs takes a few seconds.
  for (int i = 0; i < 600; ++i) {
    if (Answers(sock)) return "";
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return "the fake kubelet exited (status " + std::to_string(status) + ")";
    }
    ::usleep(50 * 1000);
  }
  return "the fake kubelet did not answer on " + sock + " within 30 s";
#endif
}

FakeKubelet::~FakeKubelet() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  ::unlink(KubeletSocketPath().c_str());
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace bench

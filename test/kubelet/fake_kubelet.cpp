#include "test/kubelet/fake_kubelet.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace kubelet_test {
namespace {

// Debian's python3, which has python3-grpcio; not whatever python3 is first on PATH.
constexpr const char* kPython = "/usr/bin/python3";

bool Accepts(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string MissingPython() {
  if (::access(kPython, X_OK) != 0) return std::string(kPython) + " (Debian: python3)";
  const std::string q = std::string(kPython) + " -c 'import ";
  if (std::system((q + "grpc' >/dev/null 2>&1").c_str()) != 0) return "python3-grpcio (import grpc failed)";
  if (std::system((q + "grpc_tools.protoc' >/dev/null 2>&1").c_str()) != 0) {
    return "python3-grpc-tools (import grpc_tools.protoc failed)";
  }
  return {};
}

FakeKubelet::FakeKubelet(const std::string& mode, const std::string& pods_file) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ecni-kubelet.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  socket_ = dir_ + "/kubelet.sock";
  const std::string script = std::string(ERDMA_SOURCE_DIR) + "/test/fake_kubelet/fake_kubelet.py";
  const std::string pods =
      pods_file.empty() ? std::string(ERDMA_SOURCE_DIR) + "/test/fake_kubelet/pods.json" : pods_file;
  const std::string calls = dir_ + "/calls.log";
  const std::string log = dir_ + "/fake.log";
  std::vector<std::string> args = {kPython,  script, "--socket", socket_, "--pods",  pods,
                                   "--mode", mode,   "--calls",  calls,   "--stubs", dir_ + "/stubs"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  int rc = ::posix_spawn(&pid_, kPython, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start the fake kubelet: " + std::string(std::strerror(rc)));
  // Generating the stubs and starting grpc takes about a second.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Accepts(socket_)) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      throw std::runtime_error("the fake kubelet exited: " + text);
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("the fake kubelet did not listen in 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

FakeKubelet::~FakeKubelet() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> FakeKubelet::Calls() const {
  std::vector<std::string> out;
  std::ifstream in(dir_ + "/calls.log");
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace kubelet_test

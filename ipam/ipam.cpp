#include "ipam/ipam.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd.h"
#include "base/json_parse.h"
#include "base/log.h"

extern char** environ;

namespace ipam {

using base::Code;
using base::Error;
using base::Result;

namespace {

constexpr size_t kMaxOutput = 1 << 20;

Result<std::string> FindPlugin(const std::vector<std::string>& path, const std::string& type) {
  for (const auto& dir : path) {
    std::string candidate = dir + "/" + type;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) return candidate;
  }
  std::string dirs;
  for (const auto& d : path) dirs += (dirs.empty() ? "" : ":") + d;
  return Error(Code::kIpam, "ipam.type: plugin \"" + type + "\" not found in CNI_PATH (" + dirs +
                                "); install it or fix ipam.type");
}

// The child's environment: ours, with CNI_COMMAND replaced.
std::vector<std::string> ChildEnv(const std::string& command) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "CNI_COMMAND=", 12) == 0) continue;
    env.emplace_back(*e);
  }
  env.push_back("CNI_COMMAND=" + command);
  return env;
}

}  // namespace

Result<nlohmann::json> ExecExecutor::Run(const std::string& type, const std::string& command,
                                         const std::string& config) {
  ASSIGN_OR_RETURN(std::string plugin, FindPlugin(cni_path_, type));

  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Error(Code::kIo, "pipe: " + std::string(std::strerror(errno)));
  base::UniqueFd in_r(in_pipe[0]), in_w(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return Error(Code::kIo, "pipe: " + std::string(std::strerror(errno)));
  base::UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_r.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out_w.get(), STDOUT_FILENO);

  std::vector<std::string> env = ChildEnv(command);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = plugin;
  char* argv[] = {arg0.data(), nullptr};

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, plugin.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Error(Code::kIpam, "ipam: cannot run " + plugin + ": " + std::strerror(rc));
  in_r.Reset();
  out_w.Reset();

  // The plugin reads all of stdin before it writes, so writing first cannot
  // deadlock; a plugin that exits early gives EPIPE, which we ignore.
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  size_t off = 0;
  while (off < config.size()) {
    ssize_t n = ::write(in_w.get(), config.data() + off, config.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    off += static_cast<size_t>(n);
  }
  ::sigaction(SIGPIPE, &old, nullptr);
  in_w.Reset();

  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(out_r.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < kMaxOutput) out.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  return ReadOutput(type, command, out, status);
}

Result<nlohmann::json> ReadOutput(const std::string& type, const std::string& command, const std::string& out,
                                  int status) {
  // Bounded like every JSON from outside (base/json_parse.h): a plugin that
  // prints a deeply nested value gets an error, not our stack.
  auto read = out.empty() ? Result<nlohmann::json>(nlohmann::json())
                          : base::ParseJson(out, "ipam " + type + " " + command + " output");
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (exited_ok) {
    if (!read.ok())
      return Error(Code::kIpam,
                   "ipam " + type + " " + command + ": output is not JSON (" + read.error().msg + ")",
                   out.substr(0, 512));
    return std::move(read).value();
  }
  const nlohmann::json parsed = read.ok() ? std::move(read).value() : nlohmann::json();
  std::string what = WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                       : "was killed by signal " + std::to_string(WTERMSIG(status));
  if (parsed.is_object() && parsed.contains("msg")) {
    const int code =
        parsed.contains("code") && parsed["code"].is_number_integer() ? parsed["code"].get<int>() : 0;
    std::string msg = parsed["msg"].is_string() ? parsed["msg"].get<std::string>() : parsed["msg"].dump();
    std::string details = parsed.contains("details") && parsed["details"].is_string()
                              ? parsed["details"].get<std::string>()
                              : "";
    return Error(code == 11 ? Code::kTryAgainLater : Code::kIpam,
                 "ipam " + type + " " + command + " failed (code " + std::to_string(code) + "): " + msg,
                 details);
  }
  return Error(Code::kIpam, "ipam " + type + " " + command + " " + what, out.substr(0, 512));
}

}  // namespace ipam

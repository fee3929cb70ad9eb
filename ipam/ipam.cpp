#include "ipam/ipam.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "base/clock.h"
#include "base/fd.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/phase.h"
#include "conf/names.h"

extern char** environ;

namespace ipam {

using base::Code;
using base::Error;
using base::Result;

namespace {

Result<std::string> FindPlugin(const std::vector<std::string>& path, const std::string& type) {
  for (const auto& dir : path) {
    std::string candidate = dir + "/" + type;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) return candidate;
  }
  return Error(Code::kIpam,
               "ipam.type: plugin \"" + type + "\" not found in CNI_PATH (" + conf::Join(path, ":") +
                   "); install it or fix ipam.type",
               {}, ENOENT)
      .ChangedNothing();
}

// Our environment with CNI_COMMAND replaced, and the attachment's variables when it runs for another one.
std::vector<std::string> ChildEnv(const std::string& command, const std::optional<Attachment>& who) {
  std::vector<std::string> env;
  auto is = [](const char* e, const char* name) { return std::strncmp(e, name, std::strlen(name)) == 0; };
  for (char** e = environ; e && *e; ++e) {
    if (is(*e, "CNI_COMMAND=")) continue;
    if (who && (is(*e, "CNI_CONTAINERID=") || is(*e, "CNI_IFNAME=") || is(*e, "CNI_NETNS=") ||
                (is(*e, "CNI_ARGS=") && !who->own_pod)))
      continue;
    env.emplace_back(*e);
  }
  env.push_back("CNI_COMMAND=" + command);
  if (who) {
    env.push_back("CNI_CONTAINERID=" + who->container_id);
    env.push_back("CNI_IFNAME=" + who->ifname);
    env.push_back("CNI_NETNS=" + who->netns);
  }
  return env;
}

using Clock = base::SteadyClock;

// Whether the plugin has exited, without reaping it: while it is an unreaped zombie its pid, and so its
// process group's id, cannot be reused, and killing the group cannot hit a stranger.
bool Exited(pid_t pid) {
  siginfo_t info{};
  info.si_pid = 0;
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD;
  return info.si_pid == pid;
}

struct Exchange {
  std::string out;
  bool timed_out = false;
  bool too_big = false;
};

// Feeds `input` to the plugin's stdin and reads its stdout until it exits or the deadline passes. EOF on
// stdout is not waited for: a child the plugin left behind may hold it open forever.
Exchange Talk(pid_t pid, base::UniqueFd in_w, base::UniqueFd out_r, const std::string& input,
              Clock::time_point deadline) {
  Exchange x;
  // Our ends only: the plugin's ends stay blocking, as plugins expect.
  ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(out_r.get(), F_SETFL, ::fcntl(out_r.get(), F_GETFL) | O_NONBLOCK);
  // Exit is noticed at once through a pidfd (Linux 5.3+), else by polling.
  base::UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  size_t off = 0;
  if (input.empty()) in_w.Reset();
  char buf[8192];
  auto read_some = [&]() {
    // false at EOF or when there is nothing more to read now.
    ssize_t n = ::read(out_r.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) {
      if (n == 0 || errno != EAGAIN) out_r.Reset();
      return false;
    }
    if (x.out.size() + static_cast<size_t>(n) > kMaxOutputBytes) {
      x.too_big = true;
      out_r.Reset();
      return false;
    }
    x.out.append(buf, static_cast<size_t>(n));
    return true;
  };
  for (;;) {
    if (Exited(pid)) {
      // Everything it wrote is in the pipe by now.
      while (out_r.valid() && read_some()) {
      }
      return x;
    }
    if (x.too_big) return x;
    const int left = base::MillisLeft(deadline);
    if (left == 0) {
      x.timed_out = true;
      return x;
    }
    pollfd fds[3];
    nfds_t n = 0;
    if (in_w.valid()) fds[n++] = {in_w.get(), POLLOUT, 0};
    if (out_r.valid()) fds[n++] = {out_r.get(), POLLIN, 0};
    if (pidfd.valid()) fds[n++] = {pidfd.get(), POLLIN, 0};
    const int wait = pidfd.valid() ? left : std::min(left, 20);
    if (::poll(fds, n, wait) < 0 && errno != EINTR) {
      ::usleep(1000);  // the deadline above still ends the wait
      continue;
    }
    if (in_w.valid()) {
      ssize_t w = ::write(in_w.get(), input.data() + off, input.size() - off);
      if (w > 0) off += static_cast<size_t>(w);
      // EPIPE: the plugin stopped reading (it exits early); not our error.
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || off == input.size()) in_w.Reset();
    }
    while (out_r.valid() && read_some()) {
    }
  }
}

}  // namespace

Result<nlohmann::json> ExecExecutor::Run(const std::string& type, const std::string& command,
                                         const std::string& config) {
  const base::phase::Scope phase(kExecPhase);
  ASSIGN_OR_RETURN(std::string plugin, FindPlugin(cni_path_, type));
  const std::string what = "ipam " + type + " " + command;

  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0)
    return Error(Code::kIo, "pipe: " + std::string(std::strerror(errno))).ChangedNothing();
  base::UniqueFd in_r(in_pipe[0]), in_w(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return Error(Code::kIo, "pipe: " + std::string(std::strerror(errno))).ChangedNothing();
  base::UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_r.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out_w.get(), STDOUT_FILENO);
  // A process group of its own: on timeout the plugin and everything it started are killed together.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<std::string> env = ChildEnv(command, for_);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = plugin;
  char* argv[] = {arg0.data(), nullptr};

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, plugin.c_str(), &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return Error(Code::kIpam, "ipam: cannot run " + plugin + ": " + std::strerror(rc), {}, rc)
        .ChangedNothing();
  in_r.Reset();
  out_w.Reset();

  // SIGPIPE off while we write to a plugin that may exit without reading;
  // only after the spawn, or the plugin would inherit it ignored.
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);

  const auto deadline = Clock::now() + std::chrono::milliseconds(time_limit_ms_);
  Exchange x = Talk(pid, std::move(in_w), std::move(out_r), config, deadline);
  ::sigaction(SIGPIPE, &old, nullptr);
  // The plugin (when it outlived the limit) and whatever it left behind. The plugin itself by its pid too: it
  // may have left the group (setsid), and it is not reaped yet, so the pid is still its own.
  ::kill(-pid, SIGKILL);
  if (x.timed_out || x.too_big) ::kill(pid, SIGKILL);
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  // The plugin's CPU (and its reaped children's) is its own phase, not ours.
  base::phase::Charge(kPluginPhase, (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1'000'000'000L +
                                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000L);
  if (x.timed_out)
    return Error(Code::kIpam,
                 what + ": " + plugin + " did not finish within ipamTimeoutMs (" +
                     std::to_string(time_limit_ms_) + " ms); it was killed with its process group",
                 {}, ETIMEDOUT);
  if (x.too_big)
    return Error(Code::kIpam, what + ": " + plugin + " printed more than " + std::to_string(kMaxOutputBytes) +
                                  " bytes; an IPAM result is far smaller");

  return ReadOutput(type, command, x.out, status);
}

Result<nlohmann::json> ReadOutput(const std::string& type, const std::string& command, const std::string& out,
                                  int status) {
  const std::string what = "ipam " + type + " " + command;
  // Depth-bounded (base/json_parse.h): a deeply nested value is an error, not a stack overflow.
  std::optional<Error> bad_json;
  nlohmann::json parsed;
  if (!out.empty()) {
    auto p = base::ParseJson(out, "the output of " + what);
    if (p.ok())
      parsed = std::move(p).value();
    else
      bad_json = std::move(p).error();
  }
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (exited_ok) {
    if (bad_json) return Error(Code::kIpam, bad_json->msg, out.substr(0, 512));
    return parsed;
  }
  std::string how = WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                      : "was killed by signal " + std::to_string(WTERMSIG(status));
  if (!bad_json && parsed.is_object() && parsed.contains("msg")) {
    const int code =
        parsed.contains("code") && parsed["code"].is_number_integer() ? parsed["code"].get<int>() : 0;
    std::string msg = parsed["msg"].is_string() ? parsed["msg"].get<std::string>() : parsed["msg"].dump();
    std::string details = parsed.contains("details") && parsed["details"].is_string()
                              ? parsed["details"].get<std::string>()
                              : "";
    Error e(code == 11 ? Code::kTryAgainLater : Code::kIpam,
            what + " failed (code " + std::to_string(code) + "): " + msg, details);
    e.plugin_answered = WIFEXITED(status);
    return e;
  }
  return Error(Code::kIpam, what + " " + how, out.substr(0, 512));
}

}  // namespace ipam

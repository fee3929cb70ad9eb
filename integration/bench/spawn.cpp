#include "integration/bench/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace bench {
namespace {

// A child that has everything prepared before fork: stdin is a pipe already
// holding the whole config (a config is far below the pipe's 64 KiB), stdout
// and stderr are memfds read after the exit, so the parent never has to poll
// while the clock runs.
struct Prepared {
  std::vector<char*> argv, envp;
  int in_r = -1;
  int out = -1, err = -1;
};

Prepared Prepare(const Invocation& inv) {
  Prepared p;
  for (const auto& a : inv.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  for (const auto& e : inv.env) p.envp.push_back(const_cast<char*>(e.c_str()));
  p.envp.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  if (inv.stdin_text.size() >= 65536) throw std::runtime_error("config too large for the stdin pipe");
  if (!inv.stdin_text.empty() && write(fds[1], inv.stdin_text.data(), inv.stdin_text.size()) !=
                                     static_cast<ssize_t>(inv.stdin_text.size()))
    throw std::runtime_error(std::string("write stdin: ") + std::strerror(errno));
  close(fds[1]);
  p.in_r = fds[0];
  p.out = memfd_create("stdout", MFD_CLOEXEC);
  p.err = memfd_create("stderr", MFD_CLOEXEC);
  if (p.out < 0 || p.err < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  return p;
}

pid_t Fork(Prepared& p) {
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(p.in_r, 0);
    dup2(p.out, 1);
    dup2(p.err, 2);
    execve(p.argv[0], p.argv.data(), p.envp.data());
    dprintf(2, "exec %s: %s\n", p.argv[0], std::strerror(errno));
    _exit(127);
  }
  close(p.in_r);
  p.in_r = -1;
  return pid;
}

std::string ReadAll(int fd) {
  std::string s;
  char buf[16384];
  lseek(fd, 0, SEEK_SET);
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return s;
}

double TvMs(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3;
}

void Finish(Prepared& p, int status, const rusage& ru, Outcome& o) {
  o.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.cpu_ms = TvMs(ru.ru_utime) + TvMs(ru.ru_stime);
  o.maxrss_kib = ru.ru_maxrss;
  o.out = ReadAll(p.out);
  o.err = ReadAll(p.err);
}

pid_t Wait(pid_t pid, int* status, rusage* ru) {
  for (;;) {
    pid_t w = wait4(pid, status, 0, ru);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
    return w;
  }
}

}  // namespace

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ThreadCpuMs() {
  // The thread's precise run time (what the children's ru_utime + ru_stime
  // from wait4 add up to as well): getrusage(RUSAGE_THREAD) splits it by
  // tick samples, and its deltas over sub-millisecond spans were often 0.
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

long SelfStatusKib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + key.size());
  return -1;
}

Outcome Spawn(const Invocation& inv) {
  Prepared p = Prepare(inv);
  Outcome o;
  const double t0 = NowMs();
  pid_t pid = Fork(p);
  int status = 0;
  rusage ru{};
  Wait(pid, &status, &ru);
  o.wall_ms = NowMs() - t0;
  Finish(p, status, ru, o);
  return o;
}

std::vector<Outcome> SpawnAll(const std::vector<Invocation>& invs, double* total_wall_ms) {
  std::vector<Prepared> ps;
  ps.reserve(invs.size());
  for (const auto& inv : invs) ps.push_back(Prepare(inv));
  std::vector<Outcome> out(invs.size());
  std::vector<pid_t> pids(invs.size());
  std::vector<double> start(invs.size());
  const double t0 = NowMs();
  for (size_t i = 0; i < ps.size(); ++i) {
    start[i] = NowMs();
    pids[i] = Fork(ps[i]);
  }
  for (size_t done = 0; done < ps.size(); ++done) {
    int status = 0;
    rusage ru{};
    pid_t w = Wait(-1, &status, &ru);
    const double t = NowMs();
    for (size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] != w) continue;
      out[i].wall_ms = t - start[i];
      Finish(ps[i], status, ru, out[i]);
    }
  }
  *total_wall_ms = NowMs() - t0;
  return out;
}

}  // namespace bench

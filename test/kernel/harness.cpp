#include "test/kernel/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>

namespace kt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ExecOut {
  int exit = -1;
  bool timed_out = false;
  std::string out, err;
};

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Runs argv with stdin fed from `in`, capturing stdout and stderr. `env` null
// means inherit ours. The child leads its own process group so that a timeout
// kills it and anything it spawned (an IPAM plugin) together.
ExecOut Exec(const std::vector<std::string>& argv, const std::vector<std::string>* env, const std::string& in,
             std::chrono::milliseconds timeout) {
  // A child that exits before reading all of stdin must not kill us with SIGPIPE.
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });

  int pin[2], pout[2], perr[2];
  ExecOut r;
  if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0) {
    r.err = "pipe2: " + std::string(std::strerror(errno));
    FailOnAnyThread(r.err);
    return r;
  }
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  if (env != nullptr) {
    for (const auto& e : *env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
  }

  pid_t pid = fork();
  if (pid < 0) {
    r.err = "fork: " + std::string(std::strerror(errno));
    FailOnAnyThread(r.err);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    dup2(pin[0], 0);
    dup2(pout[1], 1);
    dup2(perr[1], 2);
    if (env != nullptr) {
      execvpe(cargv[0], cargv.data(), cenv.data());
    } else {
      execvp(cargv[0], cargv.data());
    }
    dprintf(2, "exec %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no race with the kill below
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  SetNonBlocking(pin[1]);
  SetNonBlocking(pout[0]);
  SetNonBlocking(perr[0]);

  size_t written = 0;
  int fd_in = pin[1];
  if (in.empty()) {
    close(fd_in);
    fd_in = -1;
  }
  int fd_out = pout[0], fd_err = perr[0];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (fd_out >= 0 || fd_err >= 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int idx_in = -1, idx_out = -1, idx_err = -1;
    if (fd_in >= 0) {
      idx_in = n;
      fds[n++] = {fd_in, POLLOUT, 0};
    }
    if (fd_out >= 0) {
      idx_out = n;
      fds[n++] = {fd_out, POLLIN, 0};
    }
    if (fd_err >= 0) {
      idx_err = n;
      fds[n++] = {fd_err, POLLIN, 0};
    }
    int pr = poll(fds, n, static_cast<int>(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (idx_in >= 0 && fds[idx_in].revents != 0) {
      ssize_t w = write(fd_in, in.data() + written, in.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) written = in.size();  // EPIPE: child gone
      if (written >= in.size()) {
        close(fd_in);
        fd_in = -1;
      }
    }
    auto drain = [&](int idx, int& fd, std::string& sink) {
      if (idx < 0 || fds[idx].revents == 0) return;
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) {
        sink.append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        fd = -1;
      }
    };
    drain(idx_out, fd_out, r.out);
    drain(idx_err, fd_err, r.err);
  }
  if (fd_in >= 0) close(fd_in);
  if (fd_out >= 0) close(fd_out);
  if (fd_err >= 0) close(fd_err);

  int status = 0;
  if (r.timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    r.exit = -1;
    return r;
  }
  // Output closed: the child is exiting (or has handed the pipes on); bound the wait too.
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return r;
    }
    usleep(2000);
  }
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<int> ParseVersion(const std::string& v) {
  std::vector<int> parts;
  std::stringstream ss(v);
  std::string p;
  while (std::getline(ss, p, '.')) parts.push_back(std::atoi(p.c_str()));
  parts.resize(3, 0);
  return parts;
}

}  // namespace

ShResult Sh(const std::string& cmd) {
  ExecOut e = Exec({"/bin/sh", "-c", cmd}, nullptr, "", std::chrono::seconds(60));
  ShResult r;
  r.exit = e.timed_out ? -1 : e.exit;
  r.out = std::move(e.out);
  r.err = std::move(e.err);
  if (e.timed_out) r.err += "\n(timed out after 60 s)";
  return r;
}

std::string ShOk(const std::string& cmd) {
  ShResult r = Sh(cmd);
  if (r.exit != 0) {
    FAIL("command failed (exit " << r.exit << "): " << cmd << "\nstdout: " << r.out << "\nstderr: " << r.err);
  }
  return r.out;
}

bool VersionAtLeast(const std::string& version, const std::string& min) {
  return ParseVersion(version) >= ParseVersion(min);
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/ecni-kt-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string PluginBinary() {
  // The test command's sanitizer phase runs this suite against build-asan's erdma-cni.
  if (const char* bin = std::getenv("ERDMA_TEST_PLUGIN"); bin != nullptr && *bin != '\0') return bin;
  return ERDMA_CNI_BIN;
}

const std::string& TestNodeFile() {
  // Written once per test process, removed at exit. The tests' dataDirs and
  // logs live under /tmp; the topology's ENIs carry the node netns's only
  // default routes, so they are allowed like a node admin would allow them.
  struct File {
    std::string path = "/tmp/ecni-kt-node-" + std::to_string(getpid()) + ".json";
    File() {
      json devices = json::array();
      for (int i = 1; i <= 9; ++i) devices.push_back("eth" + std::to_string(i));
      const json node = {{"dataDirs", {"/run/erdma-cni", "/tmp/"}},
                         {"logFiles", {"/tmp/"}},
                         {"allowNodeDevices", devices},
                         {"attachmentsDir", TestAttachmentsDir()}};
      WriteNodeFile(path, node.dump());
    }
    ~File() { ::unlink(path.c_str()); }
  };
  static File f;
  return f.path;
}

std::string TestAttachmentsDir() {
  // Removed at exit whichever node file named it.
  struct Dir {
    std::string path = "/run/ecni-kt-attachments-" + std::to_string(getpid());
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static Dir d;
  return d.path;
}

void WriteNodeFile(const std::string& path, const std::string& text, mode_t mode) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::fchmod(fd, mode);
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
}

PluginResult RunPlugin(const PluginCall& call) {
  std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  auto set = [&](const char* k, const std::string& v) { env.push_back(std::string(k) + "=" + v); };
  if (!call.command.empty()) set("CNI_COMMAND", call.command);
  if (!call.container_id.empty()) set("CNI_CONTAINERID", call.container_id);
  if (call.netns) set("CNI_NETNS", *call.netns);
  if (!call.ifname.empty()) set("CNI_IFNAME", call.ifname);
  set("CNI_PATH", call.cni_path.value_or(fs::path(PluginBinary()).parent_path().string() + ":/usr/lib/cni"));
  if (!call.cni_args.empty()) set("CNI_ARGS", call.cni_args);
  env.insert(env.end(), call.extra_env.begin(), call.extra_env.end());
  // The node file, unless the test brings its own (or "ERDMA_CNI_NODE_CONFIG"
  // alone in extra_env: the variable unset, the built-in path).
  const std::string node_var = "ERDMA_CNI_NODE_CONFIG";
  auto own =
      std::find_if(env.begin(), env.end(), [&](const std::string& e) { return e.starts_with(node_var); });
  if (own == env.end())
    set("ERDMA_CNI_NODE_CONFIG", TestNodeFile());
  else if (*own == node_var)
    env.erase(own);
  // A sanitized build (ERDMA_CNI_SANITIZE) reads its options from these.
  for (const char* k : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* v = std::getenv(k)) set(k, v);

  std::vector<std::string> argv;
  if (!call.run_in.empty()) {
    // `ip netns exec` (not a bare setns) also remounts /sys for the node
    // netns, so /sys/class/net shows the node's devices, not the host's.
    argv = {"ip", "netns", "exec", call.run_in};
  }
  argv.push_back(PluginBinary());

  ExecOut e = Exec(argv, &env, call.stdin_text, call.timeout);
  PluginResult r;
  r.exit = e.exit;
  r.timed_out = e.timed_out;
  r.out = std::move(e.out);
  r.err = std::move(e.err);
  r.json = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (r.json.is_discarded()) r.json = nullptr;
  // In a sanitized build a report is a failure of whatever test ran the
  // plugin, even when its exit status looks like the expected error.
  for (const char* report : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"}) {
    if (r.err.find(report) != std::string::npos)
      FailOnAnyThread("sanitizer report from the plugin:\n" + r.err);
  }
  CheckInvariants(call, r);
  return r;
}

json PluginConfig(const ConfigSpec& spec) {
  json c = {
      {"cniVersion", spec.cni_version}, {"name", spec.name}, {"type", "erdma-cni"}, {"logLevel", "debug"}};
  if (!spec.device.empty()) c["device"] = {{"name", spec.device}};
  if (!spec.data_dir.empty()) c["dataDir"] = spec.data_dir;
  if (!spec.log_file.empty()) c["logFile"] = spec.log_file;
  if (spec.addresses) c["addresses"] = *spec.addresses;
  if (spec.ipam) c["ipam"] = *spec.ipam;
  if (spec.prev_result) c["prevResult"] = *spec.prev_result;
  c.merge_patch(spec.extra);
  return c;
}

json TerwayPrevResult(const std::string& version, const std::string& container_id) {
  json ip = {{"address", "172.16.0.5/24"}, {"gateway", "172.16.0.1"}, {"interface", 0}};
  if (!VersionAtLeast(version, "1.0.0")) ip["version"] = "4";
  return {{"cniVersion", version},
          {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", container_id}}})},
          {"ips", json::array({ip})},
          {"routes", json::array({{{"dst", "0.0.0.0/0"}}})},
          {"dns", json::object()}};
}

PluginCall Call(const Topology& t, const std::string& command, const std::string& container_id,
                const std::string& ifname, const json& config, int pod) {
  PluginCall c;
  c.command = command;
  c.container_id = container_id;
  c.netns = t.PodPath(pod);
  c.ifname = ifname;
  c.stdin_text = config.dump();
  c.run_in = t.node();
  return c;
}

PluginCall Gc(const Topology& t, const json& config) {
  PluginCall c;
  c.command = "GC";
  c.stdin_text = config.dump();
  c.run_in = t.node();
  return c;
}

std::string Describe(const PluginResult& r) {
  std::ostringstream s;
  s << "exit=" << r.exit << (r.timed_out ? " (timed out)" : "") << "\nstdout: " << r.out
    << "\nstderr: " << r.err;
  return s.str();
}

json AsRuntimeWouldForDel(json config, const json& add_result) {
  if (VersionAtLeast(config.value("cniVersion", "0.0.0"), "0.4.0")) {
    config["prevResult"] = add_result;
  }
  return config;
}

std::vector<std::string> SweepSample(const std::vector<std::string>& points, const std::string& sweep) {
  const char* stride_env = std::getenv("ERDMA_TEST_SWEEP_STRIDE");
  const long stride = stride_env != nullptr ? std::strtol(stride_env, nullptr, 10) : 1;
  if (stride <= 1) return points;
  const char* offset_env = std::getenv("ERDMA_TEST_SWEEP_OFFSET");
  const long from = offset_env != nullptr ? std::strtol(offset_env, nullptr, 10) : std::time(nullptr) / 86400;
  const long offset = (from % stride + stride) % stride;
  std::vector<std::string> kept;
  for (size_t i = 0; i < points.size(); ++i)
    if (static_cast<long>(i) % stride == offset) kept.push_back(points[i]);
  if (kept.empty() && !points.empty())
    kept.push_back(points[offset % points.size()]);  // never an empty sweep
  std::cout << "sampled sweep: " << sweep << ": " << kept.size() << " of " << points.size()
            << " fault points (ERDMA_TEST_SWEEP_STRIDE=" << stride << " ERDMA_TEST_SWEEP_OFFSET=" << offset
            << " runs these again; unset, all)\n";
  return kept;
}

}  // namespace kt

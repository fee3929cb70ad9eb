#include "test/kernel/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <sstream>

namespace kt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::atomic<int> g_counter{0};

struct ExecOut {
  int exit = -1;
  bool timed_out = false;
  std::string out, err;
};

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Runs argv with stdin fed from `in`, capturing stdout and stderr. `env` null
// means inherit ours. The child leads its own process group so that a timeout
// kills it and anything it spawned (an IPAM plugin) together.
ExecOut Exec(const std::vector<std::string>& argv, const std::vector<std::string>* env,
             const std::string& in, std::chrono::milliseconds timeout) {
  // A child that exits before reading all of stdin must not kill us with SIGPIPE.
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });

  int pin[2], pout[2], perr[2];
  if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0) {
    FAIL("pipe2: " << std::strerror(errno));
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  if (env != nullptr) {
    for (const auto& e : *env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
  }

  pid_t pid = fork();
  if (pid < 0) FAIL("fork: " << std::strerror(errno));
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

  ExecOut r;
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
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int idx_in = -1, idx_out = -1, idx_err = -1;
    if (fd_in >= 0) { idx_in = n; fds[n++] = {fd_in, POLLOUT, 0}; }
    if (fd_out >= 0) { idx_out = n; fds[n++] = {fd_out, POLLIN, 0}; }
    if (fd_err >= 0) { idx_err = n; fds[n++] = {fd_err, POLLIN, 0}; }
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

// Namespaces left by test processes that died without teardown (SIGKILL,
// ctest timeout). Names carry the owner's pid; remove those whose owner is gone.
void SweepStaleNamespaces() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::error_code ec;
    static const std::regex re("^ecni-([0-9]+)-[0-9]+-.*$");
    for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
      std::string name = e.path().filename();
      std::smatch m;
      if (!std::regex_match(name, m, re)) continue;
      pid_t owner = std::atoi(m[1].str().c_str());
      if (owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;
      Sh("ip netns del " + name);
    }
  });
}

json IpJson(const std::string& cmd) {
  std::string out = ShOk(cmd);
  if (out.find_first_not_of(" \n\t") == std::string::npos) return json::array();
  return json::parse(out);
}

void EraseKeys(json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) j.erase(k);
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
    FAIL("command failed (exit " << r.exit << "): " << cmd << "\nstdout: " << r.out
                                 << "\nstderr: " << r.err);
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

Topology::Topology(TopologyOptions opts) {
  SweepStaleNamespaces();
  prefix_ = "ecni-" + std::to_string(getpid()) + "-" + std::to_string(g_counter++) + "-";
  try {
    Build(opts);
  } catch (...) {
    Teardown();
    throw;
  }
}

Topology::~Topology() { Teardown(); }

void Topology::Build(const TopologyOptions& opts) {
  node_ = prefix_ + "node";
  vpc_ = prefix_ + "vpc";
  for (int i = 0; i < opts.pods; ++i) pods_.push_back(prefix_ + "pod" + std::to_string(i));

  std::vector<std::string> all = {node_, vpc_};
  all.insert(all.end(), pods_.begin(), pods_.end());
  for (const auto& ns : all) {
    // Record before creating: a half-built topology is still torn down.
    live_.push_back(ns);
    ShOk("ip netns add " + ns);
  }

  std::ostringstream s;
  s << "set -ex\n";
  for (const auto& ns : all) {
    // DAD off everywhere (all + default, so devices moved in later inherit it):
    // IPv6 addresses are usable at once and snapshots never see `tentative`.
    s << "ip netns exec " << ns << " sh -c 'echo 0 > /proc/sys/net/ipv6/conf/all/accept_dad; "
      << "echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad'\n";
    s << "ip -n " << ns << " link set lo up\n";
  }
  s << "ip -n " << vpc_ << " link add br0 type bridge\n"
    << "ip -n " << vpc_ << " addr add " << kGateway4 << "/24 dev br0\n"
    << "ip -n " << vpc_ << " addr add " << kOffSubnetTarget << "/32 dev br0\n";
  if (opts.ipv6) {
    s << "ip -n " << vpc_ << " addr add " << kGateway6 << "/64 dev br0 nodad\n"
      << "ip -n " << vpc_ << " addr add " << kOffSubnetTarget6 << "/128 dev br0 nodad\n";
  }
  s << "ip -n " << vpc_ << " link set br0 up\n";

  for (int i = 1; i <= opts.enis; ++i) {
    Eni e;
    e.name = "eth" + std::to_string(i);
    e.ip4 = "10.9.0." + std::to_string(10 + i);
    if (opts.ipv6) e.ip6 = "fd00:9::" + std::to_string(10 + i);
    e.metric = 200 + static_cast<uint32_t>(i) - 1;
    e.up = std::find(opts.down.begin(), opts.down.end(), i) == opts.down.end();
    std::string peer = "eni" + std::to_string(i);
    std::string n = "ip -n " + node_ + " ";
    std::string m = std::to_string(e.metric);
    s << n << "link add " << e.name << " type veth peer name " << peer << " netns " << vpc_ << "\n"
      << "ip -n " << vpc_ << " link set " << peer << " master br0 up\n"
      << n << "addr add " << e.ip4 << "/24 dev " << e.name << " noprefixroute\n";
    if (opts.ipv6) s << n << "addr add " << e.ip6 << "/64 dev " << e.name << " nodad noprefixroute\n";
    if (e.up) {
      // The node agent's routes through a secondary ENI (Terway installs them
      // at metric 200+ so they never outrank the primary NIC).
      s << n << "link set " << e.name << " up\n"
        << n << "route add " << kSubnet4 << " dev " << e.name << " proto static scope link src "
        << e.ip4 << " metric " << m << "\n"
        << n << "route add default via " << kGateway4 << " dev " << e.name << " metric " << m
        << "\n";
      if (opts.ipv6) {
        s << n << "-6 route add " << kSubnet6 << " dev " << e.name << " proto static metric " << m
          << "\n"
          << n << "-6 route add default via " << kGateway6 << " dev " << e.name << " metric " << m
          << "\n";
      }
    }
    enis_.push_back(e);
  }

  if (opts.primary) {
    // What Terway leaves in the pod before we run: eth0 with the pod IP and a default route.
    std::string n = "ip -n " + node_ + " ";
    std::string p = "ip -n " + pods_.at(0) + " ";
    s << n << "link add vethpod0 type veth peer name eth0 netns " << pods_.at(0) << "\n"
      << n << "addr add 172.16.0.1/24 dev vethpod0\n"
      << n << "link set vethpod0 up\n"
      << p << "addr add 172.16.0.5/24 dev eth0\n"
      << p << "link set eth0 up\n"
      << p << "route add default via 172.16.0.1 dev eth0\n";
  }
  ShOk(s.str());

  for (auto& e : enis_) {
    json link = LinkJson(node_, e.name);
    REQUIRE(link.is_object());
    e.mac = link.value("address", "");
  }
}

void Topology::Teardown() {
  for (auto it = live_.rbegin(); it != live_.rend(); ++it) Sh("ip netns del " + *it);
  live_.clear();
}

void Topology::DeletePod(int i) {
  const std::string& ns = pods_.at(i);
  ShOk("ip netns del " + ns);
  live_.erase(std::remove(live_.begin(), live_.end(), ns), live_.end());
}

std::string Topology::ContainerId(const std::string& tag) const {
  return "ctr-" + prefix_.substr(5) + tag;  // "ctr-<pid>-<n>-<tag>"
}

std::string Snapshot(const std::string& netns) {
  const std::string ip = "ip -n " + netns + " ";
  std::vector<std::string> lines;

  for (json link : IpJson(ip + "-d -j link show")) {
    // ifindex and peer indexes/netnsids are allocation details, not state we restore.
    EraseKeys(link, {"ifindex", "link", "link_index", "link_netnsid", "stats", "stats64"});
    if (link.contains("linkinfo")) {
      json li = json::object();
      for (const char* k : {"info_kind", "info_slave_kind"}) {
        if (link["linkinfo"].contains(k)) li[k] = link["linkinfo"][k];
      }
      link["linkinfo"] = li;  // info_data holds timers (bridge) that tick
    }
    lines.push_back("link " + link.dump());
  }
  for (const json& link : IpJson(ip + "-j addr show")) {
    for (json a : link.value("addr_info", json::array())) {
      EraseKeys(a, {"valid_life_time", "preferred_life_time", "tentative", "optimistic"});
      a["dev"] = link.value("ifname", "");
      lines.push_back("addr " + a.dump());
    }
  }
  for (int fam : {4, 6}) {
    std::string f = std::to_string(fam);
    for (json r : IpJson(ip + "-" + f + " -j route show table all")) {
      EraseKeys(r, {"expires", "cache", "uid"});
      lines.push_back("route" + f + " " + r.dump());
    }
    for (json r : IpJson(ip + "-" + f + " -j rule show")) {
      lines.push_back("rule" + f + " " + r.dump());
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string SnapshotDiff(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string l;
    while (std::getline(ss, l)) v.push_back(l);
    std::sort(v.begin(), v.end());
    return v;
  };
  auto va = split(a), vb = split(b);
  std::vector<std::string> only_a, only_b;
  std::set_difference(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(only_a));
  std::set_difference(vb.begin(), vb.end(), va.begin(), va.end(), std::back_inserter(only_b));
  std::string out;
  for (const auto& l : only_a) out += "- " + l + "\n";
  for (const auto& l : only_b) out += "+ " + l + "\n";
  return out;
}

std::vector<std::string> StateFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) || it->is_symlink(ec)) {
      files.push_back(fs::relative(it->path(), dir, ec).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::string StatePath(const std::string& data_dir, const std::string& network,
                      const std::string& container_id, const std::string& ifname) {
  return data_dir + "/" + network + "/" + container_id + "-" + ifname;
}

std::vector<std::string> ClaimsFor(const std::string& data_dir, const std::string& container_id) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir + "/devices", ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::ifstream f(e.path());
    std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (content.find(container_id) != std::string::npos) found.push_back(e.path().string());
  }
  return found;
}

std::string PluginBinary() { return ERDMA_CNI_BIN; }

PluginResult RunPlugin(const PluginCall& call) {
  std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  auto set = [&](const char* k, const std::string& v) { env.push_back(std::string(k) + "=" + v); };
  if (!call.command.empty()) set("CNI_COMMAND", call.command);
  if (!call.container_id.empty()) set("CNI_CONTAINERID", call.container_id);
  if (call.netns) set("CNI_NETNS", *call.netns);
  if (!call.ifname.empty()) set("CNI_IFNAME", call.ifname);
  set("CNI_PATH", call.cni_path.value_or(fs::path(PluginBinary()).parent_path().string() +
                                         ":/usr/lib/cni"));
  if (!call.cni_args.empty()) set("CNI_ARGS", call.cni_args);

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
  return r;
}

json PluginConfig(const ConfigSpec& spec) {
  json c = {{"cniVersion", spec.cni_version},
            {"name", spec.name},
            {"type", "erdma-cni"},
            {"logLevel", "debug"}};
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

std::vector<std::string> Addresses(const std::string& netns, const std::string& dev, int family) {
  std::vector<std::string> out;
  ShResult r = Sh("ip -n " + netns + " -" + std::to_string(family) + " -j addr show dev " + dev);
  if (r.exit != 0) return out;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& link : j) {
    for (const auto& a : link.value("addr_info", json::array())) {
      if (a.value("scope", "") == "link") continue;
      out.push_back(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0)));
    }
  }
  return out;
}

bool LinkExists(const std::string& netns, const std::string& dev) {
  return Sh("ip -n " + netns + " link show dev " + dev).exit == 0;
}

json LinkJson(const std::string& netns, const std::string& dev) {
  ShResult r = Sh("ip -n " + netns + " -d -j link show dev " + dev);
  if (r.exit != 0) return nullptr;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array() || j.empty()) return nullptr;
  return j[0];
}

json Routes(const std::string& netns, const std::string& table, int family) {
  return IpJson("ip -n " + netns + " -" + std::to_string(family) + " -j route show table " + table);
}

json Rules(const std::string& netns, int family) {
  return IpJson("ip -n " + netns + " -" + std::to_string(family) + " -j rule show");
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

void CheckError(const PluginResult& r, int code, const std::vector<std::string>& msg_any) {
  INFO(Describe(r));
  CHECK(r.exit != 0);
  CHECK_FALSE(r.timed_out);
  REQUIRE(r.json.is_object());
  CHECK(r.json.contains("cniVersion"));
  CHECK(r.json.value("cniVersion", json()).is_string());
  CHECK(r.json.value("code", -1) == code);
  std::string msg = r.json.value("msg", "");
  CHECK_FALSE(msg.empty());
  if (!msg_any.empty()) {
    bool named = std::any_of(msg_any.begin(), msg_any.end(),
                             [&](const std::string& p) { return msg.find(p) != std::string::npos; });
    INFO("msg should contain one of the expected words");
    CHECK(named);
  }
}

std::string WithoutLines(const std::string& snapshot, const std::string& needle) {
  std::stringstream ss(snapshot);
  std::string line, out;
  while (std::getline(ss, line)) {
    if (line.find(needle) == std::string::npos) out += line + "\n";
  }
  return out;
}

long RuleTable(const std::string& netns, const std::string& src, int family, long* priority) {
  for (const auto& r : Rules(netns, family)) {
    if (r.value("src", "") != src) continue;
    if (priority != nullptr) *priority = r.value("priority", -1L);
    std::string table = r.value("table", "");
    if (table == "main") return 254;
    if (table == "local") return 255;
    if (table == "default") return 253;
    return std::atol(table.c_str());
  }
  return -1;
}

ShResult Ping(const std::string& netns, const std::string& from, const std::string& to) {
  std::string fam = to.find(':') == std::string::npos ? "-4" : "-6";
  return Sh("ip netns exec " + netns + " ping " + fam + " -n -c1 -W2 -I " + from + " " + to);
}

json RouteGet(const std::string& netns, const std::string& to, const std::string& from) {
  std::string cmd = "ip -n " + netns + " -j route get " + to;
  if (!from.empty()) cmd += " from " + from;
  ShResult r = Sh(cmd);
  if (r.exit != 0) return nullptr;
  json j = json::parse(r.out, nullptr, false);
  if (!j.is_array() || j.empty()) return nullptr;
  return j[0];
}

long CheckAttached(const std::string& pod, const Attached& a) {
  const int fam = a.addr.find(':') == std::string::npos ? 4 : 6;
  const std::string off = fam == 4 ? kOffSubnetTarget : kOffSubnetTarget6;
  INFO("pod " << pod << " dev " << a.dev << " addr " << a.addr);

  json link = LinkJson(pod, a.dev);
  REQUIRE(link.is_object());
  json flags = link.value("flags", json::array());
  CHECK(std::find(flags.begin(), flags.end(), "UP") != flags.end());
  if (!a.mac.empty()) CHECK(link.value("address", "") == a.mac);
  if (a.mtu) CHECK(link.value("mtu", 0) == *a.mtu);

  auto addrs = Addresses(pod, a.dev, fam);
  CHECK(std::find(addrs.begin(), addrs.end(), a.addr + "/" + std::to_string(a.prefix)) !=
        addrs.end());

  // Main table: the subnet route at routeMetric only (the kernel's metric-0
  // IPv4 / metric-256 IPv6 prefix route would outrank the primary NIC), and
  // no default route through our interface.
  int subnet_routes = 0;
  for (const auto& r : Routes(pod, "main", fam)) {
    if (r.value("dev", "") != a.dev) continue;
    CHECK(r.value("dst", "") != "default");
    if (r.value("dst", "") == a.subnet) {
      ++subnet_routes;
      CHECK(r.value("metric", 0U) == a.route_metric);
    }
  }
  CHECK(subnet_routes == 1);

  long prio = -1;
  long table = RuleTable(pod, a.addr, fam, &prio);
  CHECK(table >= 200);
  CHECK(table != 253);
  CHECK(table != 254);
  CHECK(table != 255);
  CHECK(prio == static_cast<long>(a.rule_priority));
  if (table < 0) return table;

  bool has_subnet = false, has_default = false;
  for (const auto& r : Routes(pod, std::to_string(table), fam)) {
    if (r.value("dev", "") != a.dev) continue;
    if (r.value("dst", "") == a.subnet) has_subnet = true;
    if (r.value("dst", "") == "default" && r.value("gateway", "") == a.gateway) has_default = true;
  }
  CHECK(has_subnet);
  CHECK(has_default);

  // The kernel's own answer: traffic from our address to something off the
  // subnet leaves through the policy table via the gateway.
  json got = RouteGet(pod, off, a.addr);
  INFO("ip route get " << off << " from " << a.addr << " = " << got.dump());
  REQUIRE(got.is_object());
  CHECK(got.value("table", "main") == std::to_string(table));
  CHECK(got.value("gateway", "") == a.gateway);
  CHECK(got.value("dev", "") == a.dev);

  ShResult p1 = Ping(pod, a.addr, a.gateway);
  INFO(p1.out << p1.err);
  CHECK(p1.exit == 0);
  ShResult p2 = Ping(pod, a.addr, off);
  INFO(p2.out << p2.err);
  CHECK(p2.exit == 0);
  return table;
}

json FindIp(const json& result, const std::string& addr) {
  for (const auto& ip : result.value("ips", json::array())) {
    if (ip.value("address", "") == addr) return ip;
  }
  return nullptr;
}

}  // namespace kt

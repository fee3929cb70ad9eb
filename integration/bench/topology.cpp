#include "integration/bench/topology.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "cni/driver/plan.h"

namespace bench {
namespace {

namespace fs = std::filesystem;

int Sh(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Namespaces of benchmark runs that died without teardown.
void SweepStale() {
  static const std::regex re("^ebench-([0-9]+)-.*$");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
    const std::string name = e.path().filename();
    std::smatch m;
    if (!std::regex_match(name, m, re)) continue;
    const pid_t owner = std::atoi(m[1].str().c_str());
    if (owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;
    Sh("ip netns del " + name + " 2>/dev/null");
  }
}

}  // namespace

void ShOk(const std::string& cmd) {
  const int rc = Sh(cmd);
  if (rc != 0) throw std::runtime_error("command failed (exit " + std::to_string(rc) + "): " + cmd);
}

namespace {
// The process that built the topology (and tears it down); the node file is
// named after it, whichever of its children writes it.
pid_t g_owner = 0;
// The ENI stand-ins the node file allows: every one the topology made. Each carries a default route at its
// own metric, so while parallel ADDs move them, whichever is left with the lowest metric is the node's
// default to the plugin, which refuses it unless allowed.
int g_allowed_enis = 9;

std::string NodeFilePath() {
  return "/tmp/erdma-bench-node-" + std::to_string(g_owner ? g_owner : ::getpid()) + ".json";
}
}  // namespace

Topology::Topology(int enis, int pods) {
  SweepStale();
  g_owner = getpid();
  g_allowed_enis = std::max(g_allowed_enis, enis);
  prefix_ = "ebench-" + std::to_string(getpid()) + "-";
  node_ = prefix_ + "node";
  vpc_ = prefix_ + "vpc";
  tpod_ = prefix_ + "tpod";
  for (int i = 0; i < pods; ++i) pods_.push_back(prefix_ + "pod" + std::to_string(i));
  std::vector<std::string> all = {node_, vpc_, tpod_};
  all.insert(all.end(), pods_.begin(), pods_.end());
  try {
    std::ostringstream s;
    s << "set -e\n";
    for (const auto& ns : all) {
      live_.push_back(ns);  // before creating: a half-built world is still torn down
      s << "ip netns add " << ns << "\n"
        << "ip -n " << ns << " link set lo up\n";
    }
    s << "ip -n " << vpc_ << " link add br0 type bridge\n"
      << "ip -n " << vpc_ << " addr add 10.9.0.1/24 dev br0\n"
      << "ip -n " << vpc_ << " link set br0 up\n";
    const std::string n = "ip -n " + node_ + " ";
    for (int i = 1; i <= enis; ++i) {
      Eni e{"eth" + std::to_string(i), "10.9.0." + std::to_string(10 + i),
            static_cast<uint32_t>(200 + i - 1)};
      const std::string peer = "eni" + std::to_string(i), m = std::to_string(e.metric);
      s << n << "link add " << e.name << " type veth peer name " << peer << " netns " << vpc_ << "\n"
        << "ip -n " << vpc_ << " link set " << peer << " master br0 up\n"
        << n << "addr add " << e.ip4 << "/24 dev " << e.name << " noprefixroute\n"
        << n << "link set " << e.name << " up\n"
        << n << "route add 10.9.0.0/24 dev " << e.name << " proto static scope link src " << e.ip4
        << " metric " << m << "\n"
        << n << "route add default via 10.9.0.1 dev " << e.name << " metric " << m << "\n";
      enis_.push_back(e);
    }
    // Terway's leftovers in a pod for mode "none": eth0 and a default route.
    s << n << "link add vethtpod type veth peer name eth0 netns " << tpod_ << "\n"
      << n << "addr add 172.16.0.1/24 dev vethtpod\n"
      << n << "link set vethtpod up\n"
      << "ip -n " << tpod_ << " addr add 172.16.0.5/24 dev eth0\n"
      << "ip -n " << tpod_ << " link set eth0 up\n"
      << "ip -n " << tpod_ << " route add default via 172.16.0.1 dev eth0\n";
    const std::string script = s.str();
    // One shell for the whole script: it is long, and quoting it for -c is not needed.
    FILE* sh = popen("/bin/sh", "w");
    if (!sh) throw std::runtime_error("popen /bin/sh failed");
    fwrite(script.data(), 1, script.size(), sh);
    const int st = pclose(sh);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) throw std::runtime_error("building the topology failed");
  } catch (...) {
    Teardown();
    throw;
  }
}

Topology::~Topology() { Teardown(); }

void Topology::Teardown() {
  for (auto it = live_.rbegin(); it != live_.rend(); ++it) Sh("ip netns del " + *it + " 2>/dev/null");
  live_.clear();
  // Namespaces the measuring process made under this run's prefix (the scale
  // group's pods) and did not remove: it died first.
  if (g_owner == getpid() && !prefix_.empty()) {
    std::error_code ec;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator("/run/netns", ec))
      if (const std::string name = e.path().filename(); name.rfind(prefix_, 0) == 0) left.push_back(name);
    for (const auto& name : left) Sh("ip netns del " + name + " 2>/dev/null");
  }
  // The node file a driver wrote (NodeFileEnv): the drivers end with _exit,
  // so its own removal at exit never runs.
  if (g_owner == getpid()) ::unlink(NodeFilePath().c_str());
}

void EnterNetns(const std::string& netns) {
  auto fail = [](const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); };
  const std::string path = "/run/netns/" + netns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open " + path);
  if (unshare(CLONE_NEWNS) != 0) fail("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) fail("making / a slave mount");
  if (setns(fd, CLONE_NEWNET) != 0) fail("setns " + path);
  close(fd);
  if (umount2("/sys", MNT_DETACH) != 0) fail("umount /sys");
  if (mount(netns.c_str(), "/sys", "sysfs", 0, nullptr) != 0) fail("mount sysfs");
}

base::Result<NodeState> ReadNodeState(netlink::Kernel& host, const std::string& name) {
  ASSIGN_OR_RETURN(auto link, host.FindLink(name));
  if (!link) return base::Error(base::Code::kDeviceNotFound, name + " is not on the node");
  NodeState s;
  s.link = *link;
  ASSIGN_OR_RETURN(auto addrs, host.ListAddrs(link->index));
  ASSIGN_OR_RETURN(auto routes, host.ListRoutes(link->index));
  s.addrs = cni::RestorableAddrs(addrs);
  s.routes = cni::RestorableRoutes(routes);
  return s;
}

base::Status RestoreNodeState(netlink::Kernel& host, const NodeState& want) {
  ASSIGN_OR_RETURN(auto link, host.FindLink(want.link.name));
  if (!link)
    return base::Error(base::Code::kDeviceNotFound, want.link.name + " did not come back to the node");
  const int index = link->index;
  auto tolerate = [](base::Status s) {
    if (!s.ok() && s.error().sys_errno == EEXIST) return base::Ok();
    return s;
  };
  if (want.link.up && !link->up) RETURN_IF_ERROR(host.SetUp(index, true));
  for (auto a : want.addrs) {
    a.ifindex = index;
    RETURN_IF_ERROR(tolerate(host.AddAddr(a)));
  }
  // A default via a gateway needs the subnet route first: two passes suffice here.
  for (int pass = 0; pass < 2; ++pass) {
    for (auto r : want.routes) {
      r.oif = index;
      base::Status s = tolerate(host.AddRoute(r));
      if (!s.ok() && !(pass == 0 && s.error().sys_errno == ENETUNREACH)) return s;
    }
  }
  return base::Ok();
}

bool SameNodeState(const NodeState& want, const NodeState& now, std::string* why) {
  auto strip = [](NodeState s) {
    s.link.index = 0;
    for (auto& a : s.addrs) a.ifindex = 0;
    for (auto& r : s.routes) r.oif = 0;
    std::sort(s.routes.begin(), s.routes.end(), [](const auto& a, const auto& b) {
      return std::tie(a.table, a.dst, a.metric) < std::tie(b.table, b.dst, b.metric);
    });
    return s;
  };
  const NodeState a = strip(want), b = strip(now);
  if (!(a.link == b.link))
    *why = "link differs (name/mac/mtu/up/kind)";
  else if (!(a.addrs == b.addrs))
    *why = "addresses differ";
  else if (!(a.routes == b.routes))
    *why = "routes differ";
  else
    return true;
  return false;
}

const std::string& KubeletSocketPath() {
  static const std::string path = "/tmp/erdma-bench-kubelet-" + std::to_string(::getpid()) + ".sock";
  return path;
}

const std::string& NodeFileEnv() {
  struct File {
    std::string path = NodeFilePath();
    std::string env = "ERDMA_CNI_NODE_CONFIG=" + path;
    File() {
      std::string devices;
      for (int i = 1; i <= g_allowed_enis; ++i)
        devices += std::string(i > 1 ? ", " : "") + "\"eth" + std::to_string(i) + "\"";
      const std::string text = R"({"dataDirs": ["/"], "logFiles": ["/"], "allowNodeDevices": [)" + devices +
                               R"(], "podResourcesSocket": ")" + KubeletSocketPath() + "\"}\n";
      ::unlink(path.c_str());
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        throw std::runtime_error("cannot write " + path);
      ::fchmod(fd, 0644);
      ::close(fd);
    }
    ~File() { ::unlink(path.c_str()); }
  };
  static File f;
  return f.env;
}

}  // namespace bench

// The private namespace world the kernel tests run the plugin in.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>

#include "test/kernel/harness.h"

namespace kt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::atomic<int> g_counter{0};

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

}  // namespace

namespace {
// The suite's sticky variant (ERDMA_TEST_STICKY_DATA=1): every dataDir directly under /tmp.
bool StickyData() {
  const char* v = std::getenv("ERDMA_TEST_STICKY_DATA");
  return v && std::string(v) == "1";
}
}  // namespace

Topology::Topology(const TopologyOptions& opts) {
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
        << n << "route add " << kSubnet4 << " dev " << e.name << " proto static scope link src " << e.ip4
        << " metric " << m << "\n"
        << n << "route add default via " << kGateway4 << " dev " << e.name << " metric " << m << "\n";
      if (opts.ipv6) {
        s << n << "-6 route add " << kSubnet6 << " dev " << e.name << " proto static metric " << m << "\n"
          << n << "-6 route add default via " << kGateway6 << " dev " << e.name << " metric " << m << "\n";
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

  // Tests take their reference snapshots right away: let carriers settle first.
  // (Not the vpc: the peer of an admin-down ENI has no carrier there, rightly.)
  StableSnapshot(node_);
  for (const auto& ns : pods_) StableSnapshot(ns);

  for (auto& e : enis_) {
    json link = LinkJson(node_, e.name);
    REQUIRE(link.is_object());
    e.mac = link.value("address", "");
  }
}

void Topology::Teardown() {
  for (auto it = live_.rbegin(); it != live_.rend(); ++it) Sh("ip netns del " + *it);
  live_.clear();
  if (StickyData()) {
    std::error_code ec;
    std::filesystem::remove_all(DataDir(), ec);
  }
}

std::string Topology::DataDir() const {
  // /tmp/<mkdtemp name>-data: a sibling of tmp(), in the sticky world-writable /tmp itself.
  return StickyData() ? tmp() + "-data" : tmp() + "/data";
}

void Topology::DeletePod(int i) {
  const std::string& ns = pods_.at(i);
  ShOk("ip netns del " + ns);
  live_.erase(std::remove(live_.begin(), live_.end(), ns), live_.end());
}

std::string Topology::ContainerId(const std::string& tag) const {
  return "ctr-" + prefix_.substr(5) + tag;  // "ctr-<pid>-<n>-<tag>"
}

}  // namespace kt

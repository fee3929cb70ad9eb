#include "integration/soak/soak.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/bench/spawn.h"
#include "integration/bench/stats.h"
#include "integration/soak/census.h"
#include "netlink/netns.h"
#include "netlink/rtnl_socket.h"

namespace soak {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kVersion = "1.0.0";
constexpr const char* kIfName = "net1";

struct Mode {
  std::string name;
  json config;
  std::string expect_ip;  ///< the address ADD must report ("" = any)
  std::vector<double> add_ms, del_ms, cycle_ms;
};

json HostLocal(const Options& opt, const std::string& first, const std::string& last) {
  return {{"type", "host-local"}, {"subnet", "10.9.0.0/24"}, {"rangeStart", first},
          {"rangeEnd", last},     {"gateway", "10.9.0.1"},   {"dataDir", opt.ipam_dir}};
}

// move-inherit and move-ipam move eth1 (the soak's first ENI); the children
// hang off eth2. Each mode is its own network: its own state directory and
// host-local range.
Mode MakeMode(const std::string& name, const Options& opt, const bench::Topology& topo) {
  json c = {
      {"cniVersion", kVersion}, {"name", "soak-" + name}, {"type", "erdma-cni"}, {"dataDir", opt.data_dir}};
  Mode m{name, {}, "", {}, {}, {}};
  if (name == "move-inherit") {
    c["device"] = {{"name", topo.eni(1).name}};
    c["addresses"] = "inherit";
    m.expect_ip = topo.eni(1).ip4 + "/24";
  } else if (name == "move-ipam") {
    c["device"] = {{"name", topo.eni(1).name}};
    c["ipam"] = HostLocal(opt, "10.9.0.150", "10.9.0.190");
  } else if (name == "macvlan") {
    c["mode"] = "macvlan";
    c["macvlan"] = {{"mode", "bridge"}};
    c["device"] = {{"name", topo.eni(2).name}};
    c["ipam"] = HostLocal(opt, "10.9.0.100", "10.9.0.140");
  } else if (name == "ipvlan") {
    c["mode"] = "ipvlan";
    c["ipvlan"] = {{"mode", "l2"}};
    c["device"] = {{"name", topo.eni(2).name}};
    c["ipam"] = HostLocal(opt, "10.9.0.200", "10.9.0.240");
  } else {
    throw std::runtime_error("unknown mode " + name);
  }
  m.config = c;
  return m;
}

bench::Invocation Make(const Options& opt, const std::string& command, const std::string& cid,
                       const std::string& netns, const json& config) {
  bench::Invocation inv;
  inv.argv = {opt.plugin};
  inv.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "CNI_COMMAND=" + command,
             "CNI_CONTAINERID=" + cid,
             "CNI_NETNS=" + netns,
             "CNI_IFNAME=" + std::string(kIfName),
             "CNI_PATH=" + opt.cni_dir,
             bench::NodeFileEnv()};
  inv.stdin_text = config.dump();
  return inv;
}

std::string Describe(const bench::Outcome& o) {
  return "exit " + std::to_string(o.exit) + "\nstdout: " + o.out + "\nstderr: " + o.err;
}

// What ADD must have done, from its result: our interface and an address.
std::string CheckResult(const Mode& m, const json& r) {
  if (!r.is_object()) return "stdout is not a JSON result";
  const json ifs = r.value("interfaces", json::array());
  const json ips = r.value("ips", json::array());
  if (ifs.size() != 1 || ifs[0].value("name", "") != kIfName)
    return "interfaces is not [" + std::string(kIfName) + "]";
  if (ips.empty()) return "no ips";
  if (!m.expect_ip.empty() && ips[0].value("address", "") != m.expect_ip)
    return "ips[0] is " + ips[0].value("address", "") + ", not " + m.expect_ip;
  return "";
}

// Descendants that outlived their plugin: this process is their subreaper,
// so an orphaned IPAM plugin would be reparented here.
int ReapStrays() {
  int n = 0;
  int st = 0;
  while (waitpid(-1, &st, WNOHANG) > 0) ++n;
  std::ifstream in("/proc/self/task/" + std::to_string(getpid()) + "/children");
  std::string pid;
  while (in >> pid) ++n;
  return n;
}

std::string Ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void PrintStats(const std::vector<Mode>& modes, int done) {
  std::cout << "| mode | cycles | step | min | median | p95 | p99 | max |\n"
            << "|---|---:|---|---:|---:|---:|---:|---:|\n";
  std::vector<double> all;
  for (const auto& m : modes) {
    all.insert(all.end(), m.cycle_ms.begin(), m.cycle_ms.end());
    using Row = std::pair<const char*, const std::vector<double>*>;
    for (const auto& [step, v] : {Row{"ADD", &m.add_ms}, Row{"DEL", &m.del_ms}, Row{"cycle", &m.cycle_ms}}) {
      const bench::Summary s = bench::Summarize(*v);
      std::cout << "| " << m.name << " | " << m.cycle_ms.size() << " | " << step << " | " << Ms(s.min)
                << " | " << Ms(s.median) << " | " << Ms(s.p95) << " | " << Ms(s.p99) << " | " << Ms(s.max)
                << " |\n";
    }
  }
  const bench::Summary s = bench::Summarize(all);
  std::cout << "| all | " << done << " | cycle | " << Ms(s.min) << " | " << Ms(s.median) << " | " << Ms(s.p95)
            << " | " << Ms(s.p99) << " | " << Ms(s.max) << " |\n\n"
            << "(milliseconds, wall time from fork to wait4 of the plugin; cycle = ADD + DEL)\n";
}

int Sh(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Whether an IPv6 address in a watched netns is still in duplicate address
// detection: its local route arrives only when DAD completes, which under
// load can be seconds after two censuses agreed.
bool Tentative(const Watch& watch) {
  for (const auto& ns : watch.netns)
    if (Sh("ip -n " + ns + " -6 addr show tentative | grep -q .") == 0) return true;
  return false;
}

// The reference is a settled node: the same census twice, a second apart,
// and no address in DAD (the carrier of a veth that just came home or was
// just made, its IPv6 link-local address and routes arrive later).
Census Baseline(const Watch& watch) {
  Census before = Take(watch);
  for (int tries = 0; tries < 20; ++tries) {
    usleep(1000 * 1000);
    Census next = Take(watch);
    const bool stable = Diff(before, next).empty() && !Tentative(watch);
    before = std::move(next);
    if (stable) break;
  }
  return before;
}

std::string LoadAvg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

const std::vector<std::string>& ModeNames() {
  static const std::vector<std::string> names = {"move-inherit", "move-ipam", "macvlan", "ipvlan"};
  return names;
}

int Run(const Options& opt, const bench::Topology& topo) {
  // Orphans of the plugins (an IPAM plugin left running) become ours.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::vector<Mode> modes;
  for (const auto& n : opt.modes) modes.push_back(MakeMode(n, opt, topo));
  const std::string pod = topo.PodPath(0);
  const std::string pod_name = fs::path(pod).filename();

  // A cheap look at the pod after every DEL, through our own rtnetlink
  // socket: it must be as empty as before. The census is the real check.
  auto pod_ns = netlink::Netns::Open(pod, "the pod");
  auto pod_k = pod_ns.ok() ? netlink::OpenRtnl(*pod_ns) : pod_ns.error();
  if (!pod_k.ok()) {
    std::cerr << "erdma-soak: " << pod_k.error().msg << "\n";
    return 1;
  }
  auto pod_counts = [&]() -> std::string {
    auto l = (*pod_k)->ListLinks();
    auto ru = (*pod_k)->ListRules();
    auto ro = (*pod_k)->ListRoutes(0);
    if (!l.ok() || !ru.ok() || !ro.ok()) return "unreadable";
    return std::to_string(l->size()) + " links, " + std::to_string(ru->size()) + " rules, " +
           std::to_string(ro->size()) + " routes";
  };

  int cycle = 0;
  std::vector<double> in_order;  ///< every measured cycle's time, in order
  auto run_cycle = [&](Mode& m, bool measured) -> bool {
    const std::string cid = "soak-" + std::to_string(getpid()) + "-" + std::to_string(cycle);
    const bench::Outcome add = bench::Spawn(Make(opt, "ADD", cid, pod, m.config));
    const std::string bad = add.exit == 0 ? CheckResult(m, json::parse(add.out, nullptr, false)) : "";
    if (add.exit != 0 || !bad.empty()) {
      std::cerr << "erdma-soak: cycle " << cycle << " (" << m.name << "): ADD failed: " << bad << "\n"
                << Describe(add) << "\n";
      return false;
    }
    // DEL as a runtime sends it after a successful ADD: with the result.
    json del_config = m.config;
    del_config["prevResult"] = json::parse(add.out);
    const bench::Outcome del = bench::Spawn(Make(opt, "DEL", cid, pod, del_config));
    if (del.exit != 0) {
      std::cerr << "erdma-soak: cycle " << cycle << " (" << m.name << "): DEL failed\n"
                << Describe(del) << "\n";
      return false;
    }
    if (measured) {
      m.add_ms.push_back(add.wall_ms);
      m.del_ms.push_back(del.wall_ms);
      m.cycle_ms.push_back(add.wall_ms + del.wall_ms);
      in_order.push_back(add.wall_ms + del.wall_ms);
    }
    return true;
  };

  // One unmeasured cycle per mode first: the plugin and host-local make
  // their directories and files (state dirs, host-local's lock and
  // last-reserved files) on first use, and those stay.
  for (auto& m : modes) {
    if (!run_cycle(m, false)) return 1;
    ++cycle;
  }
  const std::string empty_pod = pod_counts();
  const Watch watch{{topo.node(), pod_name, topo.vpc()}, {opt.data_dir, opt.ipam_dir}, opt.parent_pid};
  Census before = Baseline(watch);
  const int strays_before = ReapStrays();
  std::cerr << "erdma-soak: before: " << Summary(before) << "\n";

  const std::string load_before = LoadAvg();
  const double t0 = bench::NowMs();
  bool ok = true;
  std::vector<std::string> leaks;
  int done = 0;
  // Cycle time per block between two censuses: a table or directory that
  // grows would show as a drift from block to block.
  std::vector<std::pair<int, bench::Summary>> blocks;
  for (int i = 0; i < opt.cycles && ok; ++i, ++cycle) {
    Mode& m = modes[static_cast<size_t>(i) % modes.size()];
    if (!run_cycle(m, true)) {
      ok = false;
      break;
    }
    ++done;
    if (const std::string now = pod_counts(); now != empty_pod) {
      std::cerr << "erdma-soak: after cycle " << cycle << " (" << m.name << ") the pod has " << now
                << " (empty: " << empty_pod << ")\n";
      ok = false;
      break;
    }
    if (done % opt.check_every == 0 || done == opt.cycles) {
      Census now;
      leaks = SettledDiff(before, watch, opt.settle_ms, &now);
      const int strays = ReapStrays() - strays_before;
      if (strays > 0) leaks.push_back("+ processes: " + std::to_string(strays) + " outlived their plugin");
      const size_t from = blocks.empty() ? 0 : static_cast<size_t>(blocks.back().first);
      blocks.emplace_back(done, bench::Summarize(std::vector<double>(
                                    in_order.begin() + static_cast<long>(from), in_order.end())));
      std::cerr << "erdma-soak: " << done << "/" << opt.cycles << " cycles, "
                << Ms((bench::NowMs() - t0) / 1000) << " s, cycle median " << Ms(blocks.back().second.median)
                << " ms since the last census: "
                << (leaks.empty() ? "nothing leaked" : std::to_string(leaks.size()) + " differences") << " ("
                << Summary(now) << ", " << std::max(strays, 0) << " stray processes)\n";
      if (!leaks.empty()) ok = false;
    }
  }
  const double total_s = (bench::NowMs() - t0) / 1000;

  std::string modes_list;
  for (const auto& m : modes) modes_list += (modes_list.empty() ? "" : ", ") + m.name;
  std::cout << "## erdma-soak: " << done << " of " << opt.cycles << " ADD/DEL cycles (" << modes_list
            << " in turn) in " << Ms(total_s) << " s\n\n"
            << "load average " << load_before << " before, " << LoadAvg() << " after ("
            << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs)\n\n";
  PrintStats(modes, done);
  std::cout << "\nCycle time by block (all modes), ms:\n\n| cycles | median | p95 | p99 | max |\n"
            << "|---|---:|---:|---:|---:|\n";
  int prev = 0;
  for (const auto& [end, sum] : blocks) {
    std::cout << "| " << prev + 1 << "–" << end << " | " << Ms(sum.median) << " | " << Ms(sum.p95) << " | "
              << Ms(sum.p99) << " | " << Ms(sum.max) << " |\n";
    prev = end;
  }
  Census after = Take(watch);
  std::cout << "\nbefore: " << Summary(before) << "\nafter:  " << Summary(after) << "\n";
  if (!leaks.empty()) {
    std::cout << "\nLEAKED (" << leaks.size() << " differences):\n";
    size_t shown = 0;
    for (const auto& l : leaks) {
      if (++shown > 50) {
        std::cout << "... and " << leaks.size() - 50 << " more\n";
        break;
      }
      std::cout << l << "\n";
    }
  }
  std::cout << "\nresult: " << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}

int SelfTest(const Options& opt, const bench::Topology& topo) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  fs::create_directories(opt.data_dir);
  fs::create_directories(opt.ipam_dir);
  const std::string mnt = fs::path(opt.data_dir).parent_path() / "mnt";
  fs::create_directories(mnt);
  const std::string pod = fs::path(topo.PodPath(0)).filename();
  const std::string node = topo.node();
  const Watch watch{{node, pod, topo.vpc()}, {opt.data_dir, opt.ipam_dir}, opt.parent_pid};
  const Census before = Baseline(watch);
  const int strays_before = ReapStrays();

  struct Leak {
    std::string what, expect;  ///< expect: a diff line starts with this
    std::function<bool()> make, undo;
  };
  int fd = -1;
  pid_t orphan = -1;
  const std::string ip_pod = "ip -n " + pod + " ", ip_node = "ip -n " + node + " ";
  const std::vector<Leak> leaks = {
      {"an fd", "+ fd: ", [&] { return (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0; },
       [&] { return ::close(fd) == 0; }},
      {"a file in dataDir", "+ file: " + opt.data_dir,
       [&] { return std::ofstream(opt.data_dir + "/leaked").good(); },
       [&] { return fs::remove(opt.data_dir + "/leaked"); }},
      {"a lease file in the IPAM dir", "+ file: " + opt.ipam_dir,
       [&] {
         return fs::create_directories(opt.ipam_dir + "/net") &&
                std::ofstream(opt.ipam_dir + "/net/10.9.0.199").good();
       },
       [&] { return fs::remove_all(opt.ipam_dir + "/net") > 0; }},
      {"a link in the pod", "+ " + pod + ": link ",
       [&] { return Sh(ip_pod + "link add leak0 type veth peer name leak1") == 0; },
       [&] { return Sh(ip_pod + "link del leak0") == 0; }},
      {"an address on a node ENI", "+ " + node + ": addr ",
       [&] { return Sh(ip_node + "addr add 10.9.0.250/32 dev " + topo.eni(2).name) == 0; },
       [&] { return Sh(ip_node + "addr del 10.9.0.250/32 dev " + topo.eni(2).name) == 0; }},
      {"a route in a pod table", "+ " + pod + ": route4 ",
       [&] { return Sh(ip_pod + "route add 192.0.2.0/24 dev lo table 300") == 0; },
       [&] { return Sh(ip_pod + "route del 192.0.2.0/24 dev lo table 300") == 0; }},
      {"a rule in the pod", "+ " + pod + ": rule4 ",
       [&] { return Sh(ip_pod + "rule add from 10.9.0.250 lookup 300 priority 200") == 0; },
       [&] { return Sh(ip_pod + "rule del from 10.9.0.250 lookup 300 priority 200") == 0; }},
      {"a mount", "+ mount: ", [&] { return ::mount("leak", mnt.c_str(), "tmpfs", 0, nullptr) == 0; },
       [&] { return ::umount2(mnt.c_str(), 0) == 0; }},
  };
  bool ok = true;
  for (const auto& l : leaks) {
    if (!l.make()) {
      std::cerr << "erdma-soak: self-test: could not make " << l.what << "\n";
      return 1;
    }
    const std::vector<std::string> diff = Diff(before, Take(watch));
    auto it = std::find_if(diff.begin(), diff.end(),
                           [&](const std::string& d) { return d.rfind(l.expect, 0) == 0; });
    const bool seen = it != diff.end();
    std::cout << (seen ? "seen:   " + l.what + ": " + *it : "MISSED: " + l.what) << "\n";
    ok = ok && seen;
    if (!l.undo()) {
      std::cerr << "erdma-soak: self-test: could not remove " << l.what << "\n";
      return 1;
    }
    if (const auto left = SettledDiff(before, watch, opt.settle_ms, nullptr); !left.empty()) {
      std::cout << "not clean after removing " << l.what << ": " << left.front() << "\n";
      ok = false;
    }
  }
  // An orphan: a grandchild whose parent exits is reparented to us.
  pid_t child = fork();
  if (child == 0) {
    if (fork() == 0) {
      pause();
      _exit(0);
    }
    _exit(0);
  }
  int st = 0;
  waitpid(child, &st, 0);
  usleep(100 * 1000);
  {
    std::ifstream in("/proc/self/task/" + std::to_string(getpid()) + "/children");
    in >> orphan;
  }
  const bool seen = ReapStrays() > strays_before;
  std::cout << (seen ? "seen:   " : "MISSED: ") << "a process that outlived its parent\n";
  ok = ok && seen;
  if (orphan > 0) {
    kill(orphan, SIGKILL);
    waitpid(orphan, &st, 0);
  }
  std::cout << "result: " << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}

}  // namespace soak

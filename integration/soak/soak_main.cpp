// erdma-soak: thousands of ADD/DEL cycles of the real erdma-cni in one run,
// in a private topology (integration/bench/topology.h), modes taking turns;
// fails on any error and on anything left behind. See docs/reliability.md.
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "integration/bench/topology.h"
#include "integration/soak/soak.h"

namespace {

namespace fs = std::filesystem;

constexpr int kSkip = 77;

constexpr const char* kUsage = R"(usage: erdma-soak [options]   (as root)
  --cycles N        ADD/DEL cycles after one warm-up cycle per mode (default 1000)
  --modes LIST      comma separated, taking turns: move-inherit, move-ipam, macvlan,
                    ipvlan (default: all that this kernel supports)
  --check-every N   full census (links, addresses, routes, rules, files, fds,
                    mounts, processes) every N cycles and at the end (default 1000)
  --settle-ms N     how long a census may take to match before it counts as a
                    leak (default 5000)
  --plugin PATH     the erdma-cni binary (default: the one built with this driver)
  --cni-dir DIR     where host-local is (default /usr/lib/cni)
  --data-root DIR   parent of the run's dataDir and IPAM dir (default /run, a
                    tmpfs like the plugin's default dataDir)
  --self-test       run no plugin: leave one of each kind of object behind and
                    check that the census sees it (proves the soak can fail)
Exit: 0 pass, 1 an error or a leak, 2 usage, 77 skipped (what is missing is printed).
)";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

bool ParseArgs(int argc, char** argv, soak::Options& o, std::string& data_root, bool& self_test) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--cycles")
      o.cycles = std::stoi(next());
    else if (a == "--modes")
      o.modes = Split(next(), ',');
    else if (a == "--check-every")
      o.check_every = std::stoi(next());
    else if (a == "--settle-ms")
      o.settle_ms = std::stoi(next());
    else if (a == "--plugin")
      o.plugin = next();
    else if (a == "--cni-dir")
      o.cni_dir = next();
    else if (a == "--data-root")
      data_root = next();
    else if (a == "--self-test")
      self_test = true;
    else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      exit(0);
    } else {
      std::cerr << "erdma-soak: unknown option " << a << "\n" << kUsage;
      return false;
    }
  }
  const auto& known = soak::ModeNames();
  for (const auto& m : o.modes) {
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      std::cerr << "erdma-soak: unknown mode " << m << "\n" << kUsage;
      return false;
    }
  }
  if (o.cycles < 1 || o.check_every < 1 || o.settle_ms < 0) {
    std::cerr << "erdma-soak: --cycles and --check-every must be >= 1, --settle-ms >= 0\n";
    return false;
  }
  return true;
}

// Whether this kernel can make a `kind` child (macvlan, ipvlan) of a veth,
// tried in a scratch netns.
bool KernelHas(const std::string& kind) {
  const std::string ns = "esoak-" + std::to_string(getpid()) + "-probe";
  const std::string cmd =
      "ip netns add " + ns + " && ip -n " + ns + " link add p0 type veth peer name p1 && ip -n " + ns +
      " link add link p0 name c0 type " + kind + "; rc=$?; ip netns del " + ns + " 2>/dev/null; exit $rc";
  const int st = std::system(("(" + cmd + ") >/dev/null 2>&1").c_str());
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int Skip(const std::string& what) {
  std::cout << "SKIPPED: " << what << "\n";
  return kSkip;
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  soak::Options opt;
#ifdef ERDMA_CNI_BIN
  opt.plugin = ERDMA_CNI_BIN;
#endif
  std::string data_root = "/run";
  bool self_test = false;
  try {
    if (!ParseArgs(argc, argv, opt, data_root, self_test)) return 2;
  } catch (const std::exception& e) {
    std::cerr << "erdma-soak: " << e.what() << "\n";
    return 2;
  }
  if (geteuid() != 0) return Skip("erdma-soak needs root (network namespaces, moving links)");
  if (!self_test && access(opt.plugin.c_str(), X_OK) != 0) return Skip(opt.plugin + " is not an executable");
  const bool wants_ipam = opt.modes.empty() || std::any_of(opt.modes.begin(), opt.modes.end(),
                                                           [](auto& m) { return m != "move-inherit"; });
  if (!self_test && wants_ipam && access((opt.cni_dir + "/host-local").c_str(), X_OK) != 0)
    return Skip(opt.cni_dir + "/host-local is missing (Debian: apt-get install containernetworking-plugins)");
  if (!self_test && opt.modes.empty()) {
    for (const auto& m : soak::ModeNames()) {
      if (m == "ipvlan" && !KernelHas("ipvlan")) {
        std::cerr << "erdma-soak: this kernel has no ipvlan (CONFIG_IPVLAN); soaking the other modes\n";
        continue;
      }
      opt.modes.push_back(m);
    }
  }
  for (const char* kind : {"macvlan", "ipvlan"}) {
    if (std::find(opt.modes.begin(), opt.modes.end(), kind) != opt.modes.end() && !KernelHas(kind))
      return Skip(std::string("this kernel cannot make ") + kind + " links");
  }

  std::string tmpl = data_root + "/erdma-soak-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::cerr << "erdma-soak: mkdtemp " << tmpl << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string root = tmpl;
  opt.data_dir = root + "/data";
  opt.ipam_dir = root + "/ipam";
  opt.parent_pid = getpid();
  utsname u{};
  uname(&u);
  std::cerr << "erdma-soak: " << (self_test ? "self-test" : std::to_string(opt.cycles) + " cycles")
            << ", plugin " << opt.plugin << ", kernel " << u.release << ", " << sysconf(_SC_NPROCESSORS_ONLN)
            << " CPUs, state in " << root << "\n";

  int rc = 1;
  try {
    bench::Topology topo(2, 1);
    // The soaking process enters the node netns (and a mount namespace of
    // its own); this one stays in the host's to tear the world down.
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int child_rc = 1;
      try {
        bench::EnterNetns(topo.node());
        child_rc = self_test ? soak::SelfTest(opt, topo) : soak::Run(opt, topo);
      } catch (const std::exception& e) {
        std::cerr << "erdma-soak: " << e.what() << "\n";
      }
      std::cout.flush();
      _exit(child_rc);
    }
    signal(SIGINT, OnSignal);
    signal(SIGTERM, OnSignal);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      if (g_stop) kill(pid, SIGTERM);
    }
    topo.Teardown();
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  } catch (const std::exception& e) {
    std::cerr << "erdma-soak: " << e.what() << "\n";
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return rc;
}

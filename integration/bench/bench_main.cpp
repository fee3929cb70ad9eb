// erdma-bench: the plugin's benchmark. Builds a private topology, then from
// inside its node netns measures the floor (the same rtnetlink work
// in-process), erdma-cni (move mode, mode none, mode macvlan), the Go
// reference chains, parallel ADDs and, asked for, the node-scale rows, and
// writes a markdown report. See docs/performance.md.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "integration/bench/calls.h"
#include "integration/bench/report.h"
#include "integration/bench/runner.h"
#include "integration/bench/scale.h"
#include "integration/bench/topology.h"

namespace {

namespace fs = std::filesystem;
using bench::Options;

// What --only names.
const std::string kGroups[] = {"floor", "erdma",   "kubelet",  "pass", "go",
                               "none",  "macvlan", "parallel", "scale"};

constexpr const char* kUsage = R"(usage: erdma-bench [options]   (as root)
  --iterations N           measured iterations per variant (default 200)
  --warmup N               unmeasured iterations first (default 10)
  --parallel LIST          parallel ADD sizes, comma separated (default 8,32; "" = none)
  --parallel-iterations N  measured rounds per size (default 5, after one warm-up round)
  --output FILE            the markdown report (default build/bench/results.md)
  --plugin PATH            the erdma-cni binary (default: the one built with this driver)
  --cni-dir DIR            Go reference plugins (default /usr/lib/cni)
  --only LIST              any of {groups}
                           (default: all but scale; kubelet includes pass, the pass-through
                           rows)
  --scale N                the scale rows: N other move attachments and N
                           macvlan children on the busy node (default 256)
  --data-dir DIR           parent of erdma-cni's dataDir (default "tmpfs": a tmpfs of
                           the benchmark's own, as /run is on a node; /tmp: a disk here)
  --variant LABEL=PATH[@DIR]  also measure another erdma-cni build (or dataDir parent,
                           "tmpfs" as above; default: --data-dir's);
                           repeatable; rows of their own, not judged against targets
  --settle-ms N            untimed pause before every ADD and DEL (default 10)
  --nice N                 run the measuring process and the plugins at nice N (default 0)
  --mtu N                  also set `mtu` (move mode: erdma-cni config and the floor)
  --phases                 erdma-cni reports its CPU by phase (ERDMA_CNI_PHASES): a table
                           of medians in the report (the clock reads cost a few us)
  --none-config FILE       the mode "none" config to use instead of the built-in one
  --profile "CMD ARGS"     run one erdma-cni ADD and DEL under CMD and exit; %c in
                           ARGS becomes ADD or DEL (e.g. "valgrind --tool=callgrind
                           --callgrind-out-file=/tmp/cg.%c" or "strace -c -w -o /tmp/sc.%c")
  --profile-mode MODE      the ADD and DEL --profile wraps: move (default), none
                           (with SMC-R, as its row) or macvlan
)";

// kUsage with {groups} spelt out from kGroups: one list for --help and the check of --only.
std::string Usage() {
  std::string groups;
  for (const auto& g : kGroups) groups += (groups.empty() ? "" : ",") + g;
  std::string text = kUsage;
  text.replace(text.find("{groups}"), 8, groups);
  return text;
}

// The busy node's addresses are numbered within a /16 (scale.cpp).
constexpr int kMaxScale = 16000;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string Which(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const auto& dir : Split(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin", ':')) {
    std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return name;
}

std::string Capture(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  pclose(f);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--iterations")
      o.iterations = std::stoi(next());
    else if (a == "--warmup")
      o.warmup = std::stoi(next());
    else if (a == "--parallel") {
      o.parallel.clear();
      for (const auto& p : Split(next(), ',')) o.parallel.push_back(std::stoi(p));
    } else if (a == "--parallel-iterations")
      o.parallel_iterations = std::stoi(next());
    else if (a == "--output")
      o.output = next();
    else if (a == "--plugin")
      o.plugin = next();
    else if (a == "--cni-dir")
      o.cni_dir = next();
    else if (a == "--only") {
      o.only = Split(next(), ',');
      for (const auto& g : o.only)
        if (std::find(std::begin(kGroups), std::end(kGroups), g) == std::end(kGroups))
          throw std::runtime_error("--only: no group " + g + " (see --help)");
    } else if (a == "--scale")
      o.scale = std::stoi(next());
    else if (a == "--mtu")
      o.mtu = std::stoi(next());
    else if (a == "--data-dir")
      o.data_root = next();
    else if (a == "--phases")
      o.phases = true;
    else if (a == "--nice")
      o.nice = std::stoi(next());
    else if (a == "--variant") {
      const std::string v = next();
      const size_t eq = v.find('='), at = v.find('@', eq == std::string::npos ? 0 : eq);
      if (eq == std::string::npos) throw std::runtime_error("--variant wants LABEL=PATH[@DIR]");
      o.variants.push_back({v.substr(0, eq),
                            v.substr(eq + 1, at == std::string::npos ? std::string::npos : at - eq - 1),
                            at == std::string::npos ? "" : v.substr(at + 1)});
      if (o.variants.back().plugin.empty()) o.variants.back().plugin = o.plugin;
    } else if (a == "--none-config")
      o.none_config = next();
    else if (a == "--profile-mode") {
      o.profile_mode = next();
      if (o.profile_mode != "move" && o.profile_mode != "none" && o.profile_mode != "macvlan")
        throw std::runtime_error("--profile-mode: move, none or macvlan, not " + o.profile_mode);
    } else if (a == "--profile") {
      o.profile = Split(next(), ' ');
      if (!o.profile.empty()) o.profile[0] = Which(o.profile[0]);
    } else if (a == "-h" || a == "--help") {
      std::cout << Usage();
      exit(0);
    } else {
      std::cerr << "erdma-bench: unknown option " << a << "\n" << Usage();
      return false;
    }
  }
  if (o.iterations < 1 || o.warmup < 0 || o.parallel_iterations < 1) {
    std::cerr << "erdma-bench: --iterations and --parallel-iterations must be >= 1, --warmup >= 0\n";
    return false;
  }
  if (o.scale < 1 || o.scale > kMaxScale) {
    std::cerr << "erdma-bench: --scale must be 1 to " << kMaxScale << "\n";
    return false;
  }
  for (auto& v : o.variants)
    if (v.data_root.empty()) v.data_root = o.data_root;
  return true;
}

void Machine(const Options& o, bench::Results& r) {
  utsname u{};
  uname(&u);
  r.kernel = std::string(u.release) + " " + u.machine;
  r.cpu = Capture("grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'");
  r.nproc = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  time_t now = time(nullptr);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  r.date = buf;
  r.plugin_path = o.plugin;
  struct stat st {};
  stat(o.plugin.c_str(), &st);
  const std::string libs = Capture("ldd '" + o.plugin + "' 2>/dev/null | grep -c '=>'");
  r.plugin_info = std::to_string(st.st_size / 1024) + " KiB, " +
                  (libs == "0" ? std::string("statically linked") : libs + " shared libraries") + "; " +
                  Capture("'" + o.plugin + "' --version 2>/dev/null | head -1") + "; git " +
                  Capture("git -C '" + fs::path(o.plugin).parent_path().string() +
                          "' rev-parse --short HEAD 2>/dev/null || echo '?'") +
                  Capture("test -n \"$(git -C '" + fs::path(o.plugin).parent_path().string() +
                          "' status --porcelain 2>/dev/null)\" && echo ' (working tree modified)'");
  r.go_info = "containernetworking-plugins " +
              Capture("dpkg-query -W -f='${Version}' containernetworking-plugins 2>/dev/null || echo '?'") +
              " in " + o.cni_dir;
  r.load_before = Capture("cut -d' ' -f1-3 /proc/loadavg");
  r.nice = o.nice;
  r.settle_ms = o.settle_ms;
  r.iterations = o.iterations;
  r.warmup = o.warmup;
  r.parallel_iterations = o.parallel_iterations;
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  Options opt;
#ifdef ERDMA_CNI_BIN
  opt.plugin = ERDMA_CNI_BIN;
#endif
  try {
    if (!ParseArgs(argc, argv, opt)) return 2;
  } catch (const std::exception& e) {
    std::cerr << "erdma-bench: " << e.what() << "\n";
    return 2;
  }
  if (geteuid() != 0) {
    std::cerr << "erdma-bench: needs root (network namespaces, moving links)\n";
    return 2;
  }
  std::vector<std::string> needed = {opt.plugin, opt.cni_dir + "/host-device", opt.cni_dir + "/sbr",
                                     opt.cni_dir + "/static"};
  if (opt.Wants("macvlan")) needed.push_back(opt.cni_dir + "/macvlan");
  for (const auto& v : opt.variants) needed.push_back(v.plugin);
  for (const auto& p : needed) {
    if (access(p.c_str(), X_OK) != 0) {
      std::cerr << "erdma-bench: " << p
                << " is missing (Debian: apt-get install containernetworking-plugins)\n";
      return 2;
    }
  }

  int max_parallel = 1;
  for (int n : opt.parallel) max_parallel = std::max(max_parallel, n);
  if (!opt.Wants("parallel") || !opt.profile.empty()) max_parallel = 1;

  bench::Results r;
  Machine(opt, r);
  // Every erdma-cni measured runs from a copy written just now, next to its file: where a binary's pages
  // came from (written through the page cache, or read back from the disk) moves every row by up to
  // 0.13 ms, and an ADD by more than VERSION (docs/performance.md, "Where the binary's pages came from"), so
  // builds compare only when written the same way.
  std::map<std::string, std::string> fresh;
  auto fresh_copy = [&](std::string& path) {
    auto [it, added] = fresh.emplace(path, path + ".bench-" + std::to_string(getpid()));
    if (added) {
      fs::copy_file(path, it->second, fs::copy_options::overwrite_existing);
      fs::permissions(it->second, fs::status(path).permissions());
    }
    path = it->second;
  };
  auto remove_copies = [&] {
    std::error_code ec;
    for (const auto& [from, copy] : fresh) fs::remove(copy, ec);
  };
  try {
    fresh_copy(opt.plugin);
    for (auto& v : opt.variants) fresh_copy(v.plugin);
    r.plugin_info += "; run from a copy written just before";
  } catch (const std::exception& e) {
    std::cerr << "erdma-bench: copying the plugin afresh: " << e.what() << "\n";
    remove_copies();
    return 1;
  }
  // The scale rows get their ENI stand-ins and a pod, the macvlan rows one more
  // of each after them, used by nothing else.
  const bool measuring = opt.profile.empty();
  const int scale_enis = opt.Wants("scale") && measuring ? bench::ScaleGroup::kEnis : 0;
  const int scale_pods = scale_enis > 0 ? 1 : 0;
  const int macvlan = opt.Wants("macvlan") && measuring ? 1 : 0;
  r.enis = max_parallel + scale_enis + macvlan;
  try {
    bench::Topology topo(r.enis, max_parallel + scale_pods + macvlan);
    bench::SetRunId(getpid());
    // The measuring process enters the node netns (and its own mount ns);
    // this one stays in the host's to tear the world down whatever happens.
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int rc = 1;
      try {
        bench::EnterNetns(topo.node());
        bench::MountRecordsTmpfs();
        if (opt.nice != 0 && setpriority(PRIO_PROCESS, 0, opt.nice) != 0)
          throw std::runtime_error("setpriority: " + std::string(std::strerror(errno)));
        if (!opt.profile.empty()) {
          rc = bench::RunProfile(opt, topo) ? 0 : 1;
        } else if (bench::RunMeasurements(opt, topo, r)) {
          r.load_after = Capture("cut -d' ' -f1-3 /proc/loadavg");
          const std::string report = bench::RenderReport(r);
          fs::path out(opt.output);
          if (out.has_parent_path()) fs::create_directories(out.parent_path());
          std::ofstream(out) << report;
          std::cout << report << "\n(written to " << opt.output << ")\n";
          rc = 0;
        }
      } catch (const std::exception& e) {
        std::cerr << "erdma-bench: " << e.what() << "\n";
      }
      std::cout.flush();
      _exit(rc);
    }
    signal(SIGINT, OnSignal);
    signal(SIGTERM, OnSignal);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      if (g_stop) kill(pid, SIGTERM);
    }
    topo.Teardown();
    remove_copies();
    bench::RemoveDataDirs(opt.data_root);
    for (const auto& v : opt.variants) bench::RemoveDataDirs(v.data_root);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  } catch (const std::exception& e) {
    remove_copies();
    std::cerr << "erdma-bench: " << e.what() << "\n";
    return 1;
  }
}

#include "integration/bench/report.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace bench {
namespace {

// The targets of ADD and DEL against the floor.
constexpr double kWallVsFloor = 1.10;
constexpr double kCpuPerAddMs = 1.0;
constexpr double kRssKib = 3 * 1024;
constexpr double kGoWallRatio = 1.4;
constexpr double kGoCpuRatio = 8.0;
constexpr double kNoneWallMs = 2.0;
constexpr double kKubeletLookupMs = 0.3;  // what device.resource's kubelet lookup may add to ADD
// What a pass-through may cost beyond VERSION (and the lookup): the
// config parsed, the node file read, one log line.
constexpr double kPassSlackMs = 0.1;
constexpr double kParallelVsFloor = 1.1;
// Targets: what the plugin adds beyond the kernel and the exec.
constexpr double kOwnAddMs = 0.35;
constexpr double kOwnDelMs = 0.30;
constexpr double kGoCpuRatioOwnShare = 6.0;
constexpr double kVersionOverExecMs = 0.05;
constexpr double kNoneWallMsTight = 1.5;
constexpr double kMacvlanOwnMs = 0.5;
// Targets: performance at node scale.
constexpr double kScaleWithin = 0.10;   // an ADD or DEL among N attachments against an empty node
constexpr double kGroupAddRatio = 3.0;  // a group of 8 rails against one rail
constexpr double kGroupDelRatio = 2.5;
constexpr double kPoolOverNameMs = 0.2;  // a device from a pool against the same by name

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Ms(const std::vector<double>& v) {
  if (v.empty()) return "n/a";
  Summary s = Summarize(v);
  return Fmt("%.2f", s.median) + " / " + Fmt("%.2f", s.p95);
}

std::string Kib(const std::vector<double>& v) {
  if (v.empty()) return "n/a";
  Summary s = Summarize(v);
  return Fmt("%.0f", s.median) + " / " + Fmt("%.0f", s.p95);
}

const Series* Row(const Results& r, const std::string& key) {
  auto it = r.rows.find(key);
  return it == r.rows.end() || it->second.wall_ms.empty() ? nullptr : &it->second;
}

double Med(const std::vector<double>& v) { return Summarize(v).median; }

// The median, iteration by iteration, of `e` less the `less` (every row runs once per iteration, in a rotated
// order): a slow spell of the machine moves it less than a difference of medians. None when a row is missing
// or the sample counts differ.
std::optional<double> PairedMedian(const std::vector<double>* e,
                                   const std::vector<const std::vector<double>*>& less) {
  if (e == nullptr) return std::nullopt;
  for (const auto* l : less)
    if (l == nullptr || l->size() != e->size()) return std::nullopt;
  std::vector<double> each(*e);
  for (size_t i = 0; i < each.size(); ++i)
    for (const auto* l : less) each[i] -= (*l)[i];
  return Med(each);
}

std::string Verdict(bool pass) { return pass ? "**PASS**" : "**MISS**"; }

// One row of a targets table; no verdict when it could not be measured.
void TargetRow(std::ostream& o, const std::string& what, const std::string& measured,
               std::optional<bool> pass) {
  o << "| " << what << " | " << measured << " | " << (pass ? Verdict(*pass) : "n/a") << " |\n";
}

// Where the macvlan and scale rows run, for the header: " (...)" or "".
std::string GroupsWhere(const Results& r) {
  std::string where;
  if (!r.macvlan_where.empty()) where = "the macvlan rows: " + r.macvlan_where;
  if (!r.scale_where.empty()) where += (where.empty() ? "" : "; ") + ("the scale rows: " + r.scale_where);
  return where.empty() ? where : " (" + where + ")";
}

std::string VariantFs(const Results& r) {
  std::string out;
  for (const auto& [label, fs] : r.variant_fs)
    if (fs != r.data_fs) out += "; variant " + label + "'s on " + fs;
  return out;
}

// --phases: erdma-cni's own account of its CPU (ERDMA_CNI_PHASES), medians.
// The process's rusage minus the phases is its exit (and the clock reads),
// the median of each invocation's difference.
// The plugin's own targets. The plugin's own share is its CPU less the exec'd
// floor's (the same requests in a static image linked as the plugin is, less
// that program's JSON input and output): exec, start-up and the exit after a
// move are in both. The first reading, less the in-process floor and
// /bin/true, is beside it: it charges the plugin for what the in-process
// floor never pays (an exit after a device move) and credits it with
// /bin/true's dynamic start-up (docs/performance.md, "The plugin's own share").
std::string OwnShareTargets(const Results& r) {
  std::ostringstream o;
  o << "\n## Targets: what the plugin adds beyond the kernel and the exec\n\n| target | measured | result "
       "|\n|---|---|---|\n";
  auto target = [&](const std::string& what, const std::string& measured, std::optional<bool> pass) {
    TargetRow(o, what, measured, pass);
  };
  // A row's CPU samples, one per iteration (nullptr: not measured).
  auto cpu = [&](const char* key) -> const std::vector<double>* {
    const Series* s = Row(r, key);
    return s == nullptr || s->cpu_ms.empty() ? nullptr : &s->cpu_ms;
  };
  // The phase `name`'s samples of a row's invocations (--phases).
  auto phase = [&](const char* row, const char* name) -> const std::vector<double>* {
    const auto p = r.phases.find(row);
    if (p == r.phases.end()) return nullptr;
    const auto s = p->second.find(name);
    return s == p->second.end() || s->second.empty() ? nullptr : &s->second;
  };
  // `e` less the `less`, judged by the difference of medians; beside it the paired figure (PairedMedian).
  using Samples = const std::vector<double>*;
  auto own = [&](const std::string& what, Samples e, const std::vector<Samples>& less, double want) {
    if (e == nullptr || std::find(less.begin(), less.end(), nullptr) != less.end())
      return target(what, "n/a", std::nullopt);
    double d = Med(*e);
    for (Samples l : less) d -= Med(*l);
    std::string measured = Fmt("%.2f ms", d);
    if (auto paired = PairedMedian(e, less)) measured += Fmt(" (paired %.2f)", *paired);
    target(what, measured, d <= want);
  };
  const auto ea = cpu("erdma ADD"), ed = cpu("erdma DEL"), xa = cpu("floor exec ADD"),
             xd = cpu("floor exec DEL");
  const auto fa = cpu("floor ADD"), fd = cpu("floor DEL"), tr = cpu("true"), idle = cpu("idle");
  own("own share of a move ADD ≤ 0.35 ms: erdma-cni ADD − exec'd floor ADD", ea, {xa}, kOwnAddMs);
  own("own share of a move DEL ≤ 0.3 ms: erdma-cni DEL − exec'd floor DEL", ed, {xd}, kOwnDelMs);
  own("the same ADD, first reading: erdma-cni ADD − floor ADD − /bin/true", ea, {fa, tr}, kOwnAddMs);
  own("the same DEL, first reading: erdma-cni DEL − floor DEL − /bin/true", ed, {fd, tr}, kOwnDelMs);
  auto go = [&](const char* what, Samples g, Samples e) {
    if (g && e && Med(*e) > 0)
      target(what, Fmt("%.2f×", Med(*g) / Med(*e)), Med(*g) / Med(*e) >= kGoCpuRatioOwnShare);
    else
      target(what, "n/a", std::nullopt);
  };
  go("Go chain / erdma-cni CPU ≥ 6×, ADD", cpu("go ADD"), ea);
  go("Go chain / erdma-cni CPU ≥ 6×, DEL", cpu("go DEL"), ed);
  const auto ver = cpu("erdma VERSION");
  own("VERSION within 0.05 ms CPU of the do-nothing exec: − /bin/true", ver, {tr}, kVersionOverExecMs);
  own("VERSION within 0.05 ms CPU of the do-nothing exec: − the static do-nothing", ver, {idle},
      kVersionOverExecMs);
  if (const Series* na = r.none_unavailable.empty() ? Row(r, "none ADD") : nullptr) {
    const double w = Med(na->wall_ms);
    target("mode none + SMC-R ADD wall ≤ 1.5 ms", Fmt("%.2f ms", w), w <= kNoneWallMsTight);
  } else {
    target("mode none + SMC-R ADD wall ≤ 1.5 ms", "n/a", std::nullopt);
  }
  const auto ma = cpu("macvlan ADD"), sa = cpu("static ADD");
  own("macvlan ADD's own share ≤ 0.5 ms: ADD − static IPAM ADD − exec'd macvlan floor ADD", ma,
      {sa, cpu("macvlan floor exec ADD")}, kMacvlanOwnMs);
  own("the same, first reading: ADD − static IPAM ADD − macvlan floor ADD − /bin/true", ma,
      {sa, cpu("macvlan floor ADD"), tr}, kMacvlanOwnMs);
  // With --phases the IPAM plugin's CPU is known invocation by invocation
  // (its rusage, as it ran under the plugin) instead of from a calibration
  // run apart.
  own("the same, the IPAM plugin's CPU as it ran (--phases): ADD less its ipam-plugin − exec'd macvlan "
      "floor ADD",
      phase("macvlan ADD", kPhaseLessIpam), {cpu("macvlan floor exec ADD")}, kMacvlanOwnMs);
  return o.str();
}

// The node-scale targets: the scale rows (--only scale). Each verdict is on the
// rows' medians; beside it, "paired", the median of the iteration-by-iteration
// ratios or differences (every variant runs once per iteration).
std::string NodeScaleTargets(const Results& r) {
  if (r.scale_n == 0)
    return "\n## Targets: node scale\n\nNot measured: the node-scale rows run with `--only scale` (and "
           "`--scale N`).\n";
  std::ostringstream o;
  const std::string n = std::to_string(r.scale_n);
  auto median_of = [](const std::vector<double>& v, size_t from, size_t to) {
    return Med(std::vector<double>(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to)));
  };
  // The busy attachments' own ADDs as the node filled: the first and the last 32.
  auto fill = [&](const char* what, const std::vector<double>& v) {
    if (v.empty()) return;
    const size_t k = std::min<size_t>(32, v.size());
    o << "- " << what << ": CPU median " << Fmt("%.2f ms", median_of(v, 0, k)) << " for the first " << k
      << ", " << Fmt("%.2f ms", median_of(v, v.size() - k, v.size())) << " for the last " << k << "\n";
  };
  o << "\n## Targets: node scale\n\n"
    << "- the busy node: " << n << " move attachments and " << n
    << " macvlan children made by erdma-cni, their state in one dataDir; made in "
    << Fmt("%.1f s", r.scale_setup_s) << " (of which the erdma-cni ADDs "
    << Fmt("%.1f s", r.scale_setup_calls_s) << "), removed in " << Fmt("%.1f s", r.scale_teardown_s)
    << " (the DELs " << Fmt("%.1f s", r.scale_teardown_calls_s) << ")\n";
  // The first ran while the busy devices not yet moved were on the node with their routes.
  fill("a move ADD while the busy node filled (its devices not yet moved still on the node)",
       r.scale_fill_move_cpu_ms);
  fill("a macvlan ADD while the busy node filled", r.scale_fill_macvlan_cpu_ms);
  o << "\n| target | measured (CPU medians) | result |\n|---|---|---|\n";
  auto row = [&](const std::string& what, const std::string& measured, std::optional<bool> holds) {
    o << "| " << what << " | " << measured << " | "
      << (holds ? (*holds ? "**HOLDS**" : "**MISS**") : std::string("n/a")) << " |\n";
  };
  auto cpu = [&](const std::string& key) -> const std::vector<double>* {
    const Series* s = Row(r, key);
    return s == nullptr ? nullptr : &s->cpu_ms;
  };
  // `a` against `b`: the ratio of their medians at most `most`.
  auto ratio = [&](const std::string& what, const std::string& a_key, const std::string& b_key, double most,
                   bool percent) {
    const auto a = cpu(a_key), b = cpu(b_key);
    if (!a || !b || Med(*b) <= 0) return row(what, "n/a", std::nullopt);
    const double v = Med(*a) / Med(*b);
    std::string measured = Fmt("%.2f", Med(*a)) + " against " + Fmt("%.2f ms: ", Med(*b)) +
                           (percent ? Fmt("%+.1f %%", (v - 1) * 100) : Fmt("%.2f×", v));
    if (a->size() == b->size()) {
      std::vector<double> each;
      for (size_t i = 0; i < a->size(); ++i)
        if ((*b)[i] > 0) each.push_back((*a)[i] / (*b)[i]);
      if (!each.empty())
        measured +=
            " (paired " + (percent ? Fmt("%+.1f %%", (Med(each) - 1) * 100) : Fmt("%.2f×", Med(each))) + ")";
    }
    row(what, measured, v <= most);
  };
  for (const char* c : {"ADD", "DEL"}) {
    const std::string cmd = c;
    ratio("move " + cmd + " with " + n + " other moves and " + n +
              " children on the node within 10 % of the empty node's",
          "scale move N " + cmd, "scale move 0 " + cmd, 1 + kScaleWithin, true);
  }
  for (const char* c : {"ADD", "DEL"}) {
    const std::string cmd = c;
    ratio("macvlan " + cmd + " on a parent with " + n + " children within 10 % of a parent without",
          "scale macvlan N " + cmd, "scale macvlan 0 " + cmd, 1 + kScaleWithin, true);
  }
  ratio("a group of 8 rails: ADD ≤ 3 × one rail's", "scale group 8 ADD", "scale group 1 ADD", kGroupAddRatio,
        false);
  ratio("a group of 8 rails: DEL ≤ 2.5 × one rail's", "scale group 8 DEL", "scale group 1 DEL",
        kGroupDelRatio, false);
  if (const auto p = cpu("scale pool ADD"), d = cpu("scale move 0 ADD"); p && d) {
    const double over = Med(*p) - Med(*d);
    std::string measured =
        Fmt("%.2f", Med(*p)) + " against " + Fmt("%.2f ms: ", Med(*d)) + Fmt("%+.2f ms", over);
    if (auto paired = PairedMedian(p, {d})) measured += Fmt(" (paired %+.2f)", *paired);
    row("a pool of one (no kubelet) ADD ≤ the same device by name + 0.2 ms", measured,
        over <= kPoolOverNameMs);
  } else {
    row("a pool of one (no kubelet) ADD ≤ the same device by name + 0.2 ms", "n/a", std::nullopt);
  }
  return o.str();
}

std::string PhaseTable(const Results& r) {
  if (r.phases.empty()) return "";
  std::ostringstream o;
  o << "\n## Phases (erdma-cni --phases: median CPU ms per invocation)\n\n"
    << "netlink: the requests (send, receive, libnl's parsing); netlink-open: the sockets; netns: "
       "opening and checking CNI_NETNS; state-*: the journal's files with their JSON; claim: the "
       "device's claim file; lookup: the rest of finding the device and planning; steps: the "
       "journal's steps apart from their requests; start-up: exec to main; ipam-exec: running the "
       "IPAM plugin (spawn, pipes, its output read and parsed); ipam-plugin: the plugin's own CPU "
       "(its rusage from wait4); exit: the process's CPU from wait4 less its phases. A median of "
       "sums is not the sum of medians.\n\n| phase |";
  for (const auto& [row, _] : r.phases) o << " " << row << " |";
  o << "\n|---|";
  for (size_t i = 0; i < r.phases.size(); ++i) o << "---|";
  o << "\n";
  std::vector<std::string> names = r.phase_order;
  names.push_back(kPhaseExit);
  names.push_back(kPhaseRusage);
  names.push_back(kPhaseLessIpam);
  for (const auto& name : names) {
    o << "| " << name << " |";
    for (const auto& [row, phases] : r.phases) {
      auto it = phases.find(name);
      o << " " << (it == phases.end() ? std::string("") : Fmt("%.3f", Med(it->second))) << " |";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace

std::string RenderReport(const Results& r) {
  std::ostringstream o;
  o << "# erdma-cni benchmark\n\n"
    << "- date: " << r.date << "\n"
    << "- load average before / after: " << r.load_before << " / " << r.load_after
    << " (other work on the machine disturbs wall times; compare rows of the same run)"
    << (r.nice ? "; measured at nice " + std::to_string(r.nice) : std::string()) << "\n"
    << "- kernel: " << r.kernel << "; CPU: " << r.cpu << "; nproc: " << r.nproc << "\n"
    << "- erdma-cni: " << r.plugin_path << " (" << r.plugin_info << ")\n"
    << "- dataDir on " << (r.data_fs.empty() ? "?" : r.data_fs) << VariantFs(r)
    << " (a node keeps it on tmpfs, /run/erdma-cni; on a disk each state write and removal costs more); the "
       "attachment records on a tmpfs of the benchmark's own at the node file's default attachmentsDir\n"
    << "- Go reference: " << r.go_info << "\n"
    << "- " << r.iterations << " iterations after " << r.warmup
    << " warm-up; in each iteration every variant "
    << "runs once, in an order rotated from one iteration to the next, each ADD and DEL after a "
    << r.settle_ms << " ms pause; topology: a node netns with " << r.enis
    << " veth ENI stand-ins, empty pod netns" << GroupsWhere(r) << "; "
    << "the driver lives in the node netns (private mount ns with the node's /sys), plugins are "
    << "fork+exec'd with CNI_* env and the config on stdin\n"
    << "- wall: clock_gettime around fork..wait4; CPU: ru_utime+ru_stime of the child from wait4 "
    << "(floor: CLOCK_THREAD_CPUTIME_ID delta); RSS: the child's ru_maxrss (it includes the forking "
    << "driver's anonymous RSS, " << r.driver_rss_anon_kib << " KiB, see the /bin/true row)\n\n";

  o << "## Per invocation (median / p95)\n\n"
    << "| what | wall ms | CPU ms | peak RSS KiB |\n|---|---|---|---|\n";
  auto line = [&](const std::string& label, const std::string& key) {
    const Series* s = Row(r, key);
    if (!s) return;
    o << "| " << label << " | " << Ms(s->wall_ms) << " | " << Ms(s->cpu_ms) << " | " << Kib(s->rss_kib)
      << " |\n";
  };
  line("floor ADD (in-process, same rtnetlink requests)", "floor ADD");
  line("floor DEL", "floor DEL");
  line(
      "floor ADD exec'd (erdma-bench-floor-exec: the same requests in a static image of their own; "
      "CPU less its JSON input and output)",
      "floor exec ADD");
  line("floor DEL exec'd", "floor exec DEL");
  line("erdma-cni ADD (move, inherit, policy routes)", "erdma ADD");
  line("erdma-cni DEL", "erdma DEL");
  if (r.kubelet_unavailable.empty()) {
    line("erdma-cni ADD, the same device from the kubelet (device.resource: Get on a fake kubelet)",
         "kubelet ADD");
    line("erdma-cni DEL of it (no kubelet call)", "kubelet DEL");
    line("erdma-cni ADD of a chained pod that asked for nothing (pass-through: one kubelet Get)", "pass ADD");
    line("erdma-cni DEL of it (a look for a state of its own)", "pass DEL");
    for (const std::string& v : r.variant_labels) {
      line("variant " + v + ": the same pass-through ADD", "pass ADD v:" + v);
      line("variant " + v + ": its DEL", "pass DEL v:" + v);
    }
    line(
        "erdma-cni ADD of the same pod, the recipe without a device plugin (pass-through on the pod's "
        "annotations: no kubelet asked)",
        "pass pool ADD");
    line("erdma-cni VERSION in the same unit, after the same pause (what those two are judged against)",
         "pass VERSION");
    line("erdma-cni ADD, the same device as a pool of one, for a pod without a GPU", "pool ADD");
    line("erdma-cni ADD, the same pool for a pod with a GPU (its GPUs mapped and the pool ranked for them)",
         "pool gpu ADD");
    line("erdma-cni DEL of the pool's attachment", "pool DEL");
  } else {
    o << "| erdma-cni ADD, device from the kubelet | " << r.kubelet_unavailable << " | | |\n";
  }
  for (const auto& v : r.variant_labels) {
    line("variant " + v + " ADD", "v:" + v + " ADD");
    line("variant " + v + " DEL", "v:" + v + " DEL");
  }
  line("Go chain ADD (host-device + static IPAM, then sbr)", "go ADD");
  line("&nbsp;&nbsp;host-device ADD (execs static)", "host-device ADD");
  line("&nbsp;&nbsp;sbr ADD", "sbr ADD");
  line("Go chain DEL (sbr, then host-device)", "go DEL");
  line("&nbsp;&nbsp;sbr DEL", "sbr DEL");
  line("&nbsp;&nbsp;host-device DEL (execs static)", "host-device DEL");
  if (r.none_unavailable.empty()) {
    line("erdma-cni mode none + SMC-R ADD", "none ADD");
    line("erdma-cni mode none + SMC-R DEL", "none DEL");
  } else {
    o << "| erdma-cni mode none + SMC-R ADD | " << r.none_unavailable << " | | |\n";
  }
  line("macvlan floor ADD (in-process, same rtnetlink requests, no IPAM exec)", "macvlan floor ADD");
  line("macvlan floor DEL", "macvlan floor DEL");
  line("macvlan floor ADD exec'd (erdma-bench-floor-exec; CPU less its JSON input and output)",
       "macvlan floor exec ADD");
  line("macvlan floor DEL exec'd", "macvlan floor exec DEL");
  if (r.macvlan_unavailable.empty()) {
    line("erdma-cni macvlan ADD (bridge child, static IPAM, policy routes)", "macvlan ADD");
    line("erdma-cni macvlan DEL", "macvlan DEL");
  } else if (!r.macvlan_where.empty()) {
    o << "| erdma-cni macvlan ADD | " << r.macvlan_unavailable << " | | |\n";
  }
  line("Go macvlan chain ADD (macvlan + static IPAM, then sbr)", "go macvlan ADD");
  line("&nbsp;&nbsp;macvlan ADD (execs static)", "macvlan plugin ADD");
  line("&nbsp;&nbsp;sbr ADD", "macvlan sbr ADD");
  line("Go macvlan chain DEL (sbr, then macvlan)", "go macvlan DEL");
  line("&nbsp;&nbsp;sbr DEL", "macvlan sbr DEL");
  line("&nbsp;&nbsp;macvlan DEL (execs static)", "macvlan plugin DEL");
  if (r.scale_n > 0) {
    const std::string n = std::to_string(r.scale_n);
    line("scale: erdma-cni ADD, move (device.name), empty dataDir: no other attachment", "scale move 0 ADD");
    line("scale: erdma-cni DEL of it", "scale move 0 DEL");
    line("scale: the same ADD with " + n + " move attachments and " + n +
             " macvlan children on the node (made by erdma-cni, their state in the dataDir)",
         "scale move N ADD");
    line("scale: erdma-cni DEL of it", "scale move N DEL");
    line("scale: erdma-cni macvlan ADD on a parent without children, empty dataDir", "scale macvlan 0 ADD");
    line("scale: erdma-cni macvlan DEL of it", "scale macvlan 0 DEL");
    line("scale: erdma-cni macvlan ADD on a parent with " + n + " children, the busy dataDir",
         "scale macvlan N ADD");
    line("scale: erdma-cni macvlan DEL of it", "scale macvlan N DEL");
    line("scale: erdma-cni ADD, device.pool of 8 names, count 1 (one rail; no kubelet)", "scale group 1 ADD");
    line("scale: erdma-cni DEL of it", "scale group 1 DEL");
    line("scale: erdma-cni ADD, the same pool, count 8 (a group of 8 rails)", "scale group 8 ADD");
    line("scale: erdma-cni DEL of the group", "scale group 8 DEL");
    line(
        "scale: erdma-cni ADD, the move device as device.pool (names: it, count 1; no kubelet), empty "
        "dataDir",
        "scale pool ADD");
    line("scale: erdma-cni DEL of it", "scale pool DEL");
  }
  line("calibration: erdma-cni VERSION (start, answer, exit)", "erdma VERSION");
  line("calibration: fork+exec of /bin/true", "true");
  line("calibration: fork+exec of a static do-nothing (erdma-bench-idle)", "idle");
  line("calibration: the same, blocked " + std::to_string(kIdleBlockMs) +
           " ms before its exit (as a device move blocks ADD and DEL)",
       "idle blocked");
  line("calibration: static IPAM ADD alone (macvlan's config)", "static ADD");
  line("calibration: static IPAM DEL alone", "static DEL");

  const Series* fa = Row(r, "floor ADD");
  const Series* fd = Row(r, "floor DEL");
  const Series* ea = Row(r, "erdma ADD");
  const Series* ed = Row(r, "erdma DEL");
  const Series* ga = Row(r, "go ADD");
  const Series* gd = Row(r, "go DEL");
  const Series* na = r.none_unavailable.empty() ? Row(r, "none ADD") : nullptr;

  auto ratio = [](const Series* a, const Series* b, bool cpu) {
    if (!a || !b) return -1.0;
    const double den = Med(cpu ? b->cpu_ms : b->wall_ms);
    return den > 0 ? Med(cpu ? a->cpu_ms : a->wall_ms) / den : -1.0;
  };
  auto x = [](double v) { return v < 0 ? std::string("n/a") : Fmt("%.2f×", v); };
  auto diff = [](const Series* a, const Series* b, bool cpu) {
    if (!a || !b) return std::string("n/a");
    return Fmt("%+.2f ms", Med(cpu ? a->cpu_ms : a->wall_ms) - Med(cpu ? b->cpu_ms : b->wall_ms));
  };
  o << "\n## Ratios (of medians)\n\n| ratio | ADD | DEL |\n|---|---|---|\n"
    << "| erdma-cni − floor, wall | " << diff(ea, fa, false) << " | " << diff(ed, fd, false) << " |\n"
    << "| erdma-cni − floor, CPU | " << diff(ea, fa, true) << " | " << diff(ed, fd, true) << " |\n"
    << "| erdma-cni / floor, wall | " << x(ratio(ea, fa, false)) << " | " << x(ratio(ed, fd, false)) << " |\n"
    << "| erdma-cni / floor, CPU | " << x(ratio(ea, fa, true)) << " | " << x(ratio(ed, fd, true)) << " |\n"
    << "| Go chain / erdma-cni, wall | " << x(ratio(ga, ea, false)) << " | " << x(ratio(gd, ed, false))
    << " |\n"
    << "| Go chain / erdma-cni, CPU | " << x(ratio(ga, ea, true)) << " | " << x(ratio(gd, ed, true))
    << " |\n";
  const Series* ma = Row(r, "macvlan ADD");
  const Series* md = Row(r, "macvlan DEL");
  const Series* mfa = Row(r, "macvlan floor ADD");
  const Series* mfd = Row(r, "macvlan floor DEL");
  const Series* gma = Row(r, "go macvlan ADD");
  const Series* gmd = Row(r, "go macvlan DEL");
  if (ma || mfa || gma) {
    o << "| erdma-cni macvlan − macvlan floor, wall | " << diff(ma, mfa, false) << " | "
      << diff(md, mfd, false) << " |\n"
      << "| erdma-cni macvlan − macvlan floor, CPU | " << diff(ma, mfa, true) << " | " << diff(md, mfd, true)
      << " |\n"
      << "| erdma-cni macvlan / macvlan floor, wall | " << x(ratio(ma, mfa, false)) << " | "
      << x(ratio(md, mfd, false)) << " |\n"
      << "| erdma-cni macvlan / macvlan floor, CPU | " << x(ratio(ma, mfa, true)) << " | "
      << x(ratio(md, mfd, true)) << " |\n"
      << "| Go macvlan chain / erdma-cni macvlan, wall | " << x(ratio(gma, ma, false)) << " | "
      << x(ratio(gmd, md, false)) << " |\n"
      << "| Go macvlan chain / erdma-cni macvlan, CPU | " << x(ratio(gma, ma, true)) << " | "
      << x(ratio(gmd, md, true)) << " |\n";
  }
  for (const auto& v : r.variant_labels) {
    const Series* va = Row(r, "v:" + v + " ADD");
    const Series* vd = Row(r, "v:" + v + " DEL");
    o << "| variant " << v << " / floor, wall | " << x(ratio(va, fa, false)) << " | "
      << x(ratio(vd, fd, false)) << " |\n"
      << "| Go chain / variant " << v << ", CPU | " << x(ratio(ga, va, true)) << " | "
      << x(ratio(gd, vd, true)) << " |\n";
  }

  if (!r.parallel.empty()) {
    o << "\n## Parallel ADDs (erdma-cni, distinct devices and pods; median of " << r.parallel_iterations
      << " rounds)\n\n"
      << "| N | total wall ms | N × floor ADD ms | total / (N × floor) | N floors at once (forked, no exec) "
         "ms "
         "| total / floors at once | per-ADD wall ms (median / p95) | per-ADD CPU ms (median / p95) "
         "| parallel DEL total ms | N floor DELs at once ms |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& p : r.parallel) {
      const double floor_n = fa ? p.n * Med(fa->wall_ms) : -1;
      const double total = Med(p.add_total_ms);
      o << "| " << p.n << " | " << Fmt("%.1f", total) << " | " << (fa ? Fmt("%.1f", floor_n) : "n/a") << " | "
        << (fa ? Fmt("%.2f", total / floor_n) : "n/a") << " | "
        << (p.floor_add_total_ms.empty() ? "n/a" : Fmt("%.1f", Med(p.floor_add_total_ms))) << " | "
        << (p.floor_add_total_ms.empty() ? "n/a" : Fmt("%.2f", total / Med(p.floor_add_total_ms))) << " | "
        << Ms(p.add_each_wall_ms) << " | " << Ms(p.add_each_cpu_ms) << " | "
        << Fmt("%.1f", Med(p.del_total_ms)) << " | "
        << (p.floor_del_total_ms.empty() ? "n/a" : Fmt("%.1f", Med(p.floor_del_total_ms))) << " |\n";
    }
  }

  o << "\n## Targets: ADD and DEL against the floor\n\n| target | measured | result |\n|---|---|---|\n";
  auto target = [&](const std::string& what, const std::string& measured, std::optional<bool> pass) {
    TargetRow(o, what, measured, pass);
  };
  auto wall_vs_floor = [&](const char* what, const Series* e, const Series* f) {
    const double v = ratio(e, f, false);
    target(std::string(what) + " wall ≤ 1.10 × floor", x(v),
           v < 0 ? std::nullopt : std::optional<bool>(v <= kWallVsFloor));
  };
  wall_vs_floor("ADD", ea, fa);
  wall_vs_floor("DEL", ed, fd);
  if (ea) {
    const double cpu = Med(ea->cpu_ms);
    target("CPU ≤ 1.0 ms per ADD", Fmt("%.2f ms", cpu), cpu <= kCpuPerAddMs);
  }
  if (ea && ed && !ea->rss_kib.empty()) {
    const double rss = std::max(Med(ea->rss_kib), Med(ed->rss_kib));
    target("peak RSS ≤ 3 MiB (ADD and DEL)", Fmt("%.2f MiB", rss / 1024), rss <= kRssKib);
  }
  auto go = [&](const char* what, const Series* g, const Series* e, bool cpu, double want) {
    const double v = ratio(g, e, cpu);
    target(std::string(what), x(v), v < 0 ? std::nullopt : std::optional<bool>(v >= want));
  };
  go("Go chain ADD wall ≥ 1.4 × erdma-cni", ga, ea, false, kGoWallRatio);
  go("Go chain DEL wall ≥ 1.4 × erdma-cni", gd, ed, false, kGoWallRatio);
  go("Go chain ADD CPU ≥ 8 × erdma-cni", ga, ea, true, kGoCpuRatio);
  go("Go chain DEL CPU ≥ 8 × erdma-cni", gd, ed, true, kGoCpuRatio);
  if (const Series* ka = r.kubelet_unavailable.empty() ? Row(r, "kubelet ADD") : nullptr; ka && ea) {
    const double extra = Med(ka->cpu_ms) - Med(ea->cpu_ms);
    target("the kubelet lookup adds ≤ 0.3 ms CPU to ADD", Fmt("%+.2f ms", extra), extra <= kKubeletLookupMs);
  } else {
    target("the kubelet lookup adds ≤ 0.3 ms CPU to ADD",
           r.kubelet_unavailable.empty() ? "n/a" : r.kubelet_unavailable, std::nullopt);
  }
  if (const Series* pg = Row(r, "pool gpu ADD"), *pn = Row(r, "pool ADD"); pg && pn) {
    const double extra = Med(pg->cpu_ms) - Med(pn->cpu_ms);
    target("ranking a pool for the pod's GPUs adds ≤ 0.3 ms CPU to ADD", Fmt("%+.2f ms", extra),
           extra <= kKubeletLookupMs);
  } else {
    target("ranking a pool for the pod's GPUs adds ≤ 0.3 ms CPU to ADD", "n/a", std::nullopt);
  }
  // A chained pod that asked for nothing: ADD pays VERSION and the kubelet lookup (what device.resource adds
  // to a move ADD), DEL VERSION and a look for a state of its own. Judged against the VERSION run in their
  // own unit, after the same pause: paired, iteration by iteration.
  const Series* ver = Row(r, "pass VERSION");
  const Series* pa = Row(r, "pass ADD");
  const Series* pd = Row(r, "pass DEL");
  auto over_version = [&](const Series* s) {
    return s && ver ? PairedMedian(&s->cpu_ms, {&ver->cpu_ms}) : std::nullopt;
  };
  const char* add_target = "a pass-through ADD ≤ VERSION + the kubelet lookup (+0.1 ms)";
  const auto add_over = over_version(pa);
  if (add_over && Row(r, "kubelet ADD") && ea) {
    const double lookup = Med(Row(r, "kubelet ADD")->cpu_ms) - Med(ea->cpu_ms);
    target(add_target, Fmt("%+.2f ms over VERSION (paired)", *add_over) + Fmt("; the lookup %.2f ms", lookup),
           *add_over <= lookup + kPassSlackMs);
  } else {
    target(add_target, "n/a", std::nullopt);
  }
  // What needs no Get (the recipe without a device plugin) or only a look for a state (DEL): VERSION + 0.1.
  auto within_slack = [&](const char* what, const Series* s) {
    if (const auto over = over_version(s))
      target(what, Fmt("%+.2f ms over VERSION (paired)", *over), *over <= kPassSlackMs);
    else
      target(what, "n/a", std::nullopt);
  };
  const Series* pp = Row(r, "pass pool ADD");
  within_slack("a pass-through ADD of the recipe without a device plugin ≤ VERSION + 0.1 ms", pp);
  within_slack("a pass-through DEL ≤ VERSION + 0.1 ms", pd);
  // By phase: what each may add to VERSION is the plugin's own account (--phases) of the Get it
  // needs (the node file that names the kubelet's socket, the request) and of its look for a state of its own
  // (the node file that allows the dataDir, the dataDir's check, the look). Paired, iteration by iteration;
  // the phases' clock reads stay charged to the plugin.
  // On nullopt, *allowance says why there is no figure: a row not run, a run without --phases, or a phase
  // the plugin did not report.
  auto beyond = [&](const Series* s, const char* row, std::initializer_list<const char*> allowed,
                    std::string* allowance) -> std::optional<double> {
    if (!s || !ver) {
      *allowance = "n/a";
      return std::nullopt;
    }
    const auto p = r.phases.find(row);
    if (p == r.phases.end()) {
      *allowance = "n/a (run with --phases)";
      return std::nullopt;
    }
    std::vector<const std::vector<double>*> less = {&ver->cpu_ms};
    double allowed_ms = 0;
    for (const char* name : allowed) {
      const auto ph = p->second.find(name);
      if (ph == p->second.end()) {
        *allowance = std::string("n/a (the plugin reported no phase ") + name + ")";
        return std::nullopt;
      }
      less.push_back(&ph->second);
      allowed_ms += Med(ph->second);
    }
    *allowance = Fmt("%.2f ms", allowed_ms);
    return PairedMedian(&s->cpu_ms, less);
  };
  std::string allowance;
  const char* add_words =
      "by phase: a pass-through ADD ≤ VERSION + the Get it needs (node file, "
      "request; --phases) + 0.1 ms";
  if (auto b = beyond(pa, "pass-through ADD", {"node-file", "pod-request"}, &allowance))
    target(add_words, Fmt("%+.2f ms beyond them; the Get ", *b) + allowance, *b <= kPassSlackMs);
  else
    target(add_words, allowance, std::nullopt);
  const char* pool_words =
      "by phase: a pass-through ADD of the recipe without a device plugin ≤ VERSION + the node "
      "file (--phases) + 0.1 ms";
  if (auto b = beyond(pp, "pass-through ADD, pool recipe", {"node-file"}, &allowance))
    target(pool_words, Fmt("%+.2f ms beyond them; the node file ", *b) + allowance, *b <= kPassSlackMs);
  else
    target(pool_words, allowance, std::nullopt);
  const char* del_words =
      "by phase: a pass-through DEL ≤ VERSION + one look for a state of its own "
      "(node file, dataDir, state; --phases) + 0.1 ms";
  if (auto b = beyond(pd, "pass-through DEL", {"node-file", "state-dir", "state-look"}, &allowance))
    target(del_words, Fmt("%+.2f ms beyond them; the look ", *b) + allowance, *b <= kPassSlackMs);
  else
    target(del_words, allowance, std::nullopt);
  if (na) {
    const double w = Med(na->wall_ms);
    target("mode none + SMC-R ADD wall ≤ 2 ms", Fmt("%.2f ms", w), w <= kNoneWallMs);
  } else {
    target("mode none + SMC-R ADD wall ≤ 2 ms", r.none_unavailable.empty() ? "n/a" : r.none_unavailable,
           std::nullopt);
  }
  for (const auto& p : r.parallel) {
    if (!fa) break;
    const double v = Med(p.add_total_ms) / (p.n * Med(fa->wall_ms));
    target(std::to_string(p.n) + " parallel ADDs total ≤ 1.1 × " + std::to_string(p.n) + " × floor ADD",
           Fmt("%.2f×", v), v <= kParallelVsFloor);
  }
  o << OwnShareTargets(r);
  o << NodeScaleTargets(r);
  o << PhaseTable(r);
  if (!r.notes.empty()) o << "\n## Notes\n\n" << r.notes;
  return o.str();
}

}  // namespace bench

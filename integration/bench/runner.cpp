#include "integration/bench/runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cni/driver/registry.h"
#include "conf/config.h"
#include "integration/bench/calls.h"
#include "integration/bench/children.h"
#include "integration/bench/floor.h"
#include "integration/bench/kubelet.h"
#include "integration/bench/scale.h"
#include "integration/bench/spawn.h"
#include "netlink/netns.h"
#include "netlink/rtnl_socket.h"

namespace bench {

using nlohmann::json;

namespace {

// N forked children run the floor at once, each on its own device and pod:
// all ADDs, then (once every child has reported) all DELs. The children are
// copies of this process, so there is no exec and no startup to pay.
bool ParallelFloor(const std::vector<FloorSpec>& specs, double* add_total, double* del_total) {
  const size_t n = specs.size();
  int done[2], go[2];
  if (pipe2(done, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) return false;
  std::vector<pid_t> pids;
  const double t0 = NowMs();
  for (size_t i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      auto att = FloorAdd(specs[i]);
      char c = att.ok() ? 'a' : 'x';
      (void)!write(done[1], &c, 1);
      if (!att.ok()) _exit(1);
      (void)!read(go[0], &c, 1);
      auto del = FloorDel(specs[i], *att);
      c = del.ok() ? 'd' : 'x';
      (void)!write(done[1], &c, 1);
      _exit(del.ok() ? 0 : 1);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  auto collect = [&](char want) {
    for (size_t i = 0; i < n; ++i) {
      char c = 0;
      if (read(done[0], &c, 1) != 1 || c != want) ok = false;
    }
  };
  collect('a');
  const double t1 = NowMs();
  for (size_t i = 0; i < n; ++i) (void)!write(go[1], "g", 1);
  collect('d');
  const double t2 = NowMs();
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ok = false;
  }
  for (int fd : {done[0], done[1], go[0], go[1]}) close(fd);
  *add_total = t1 - t0;
  *del_total = t2 - t1;
  return ok;
}

}  // namespace

bool Options::Wants(const std::string& what) const {
  if (std::find(only.begin(), only.end(), what) != only.end()) return true;
  // The scale group makes hundreds of attachments before it starts: asked for by name only.
  return only.empty() && what != "scale";
}

bool RunMeasurements(const Options& opt, const Topology& topo, Results& r) {
  const std::string data_dir = MakeDataDir(opt.data_root);
  r.data_fs = DataRootFs(opt.data_root);
  for (const auto& v : opt.variants) r.variant_fs[v.label] = DataRootFs(v.data_root);
  const std::string hd = opt.cni_dir + "/host-device", sbr = opt.cni_dir + "/sbr";
  const Eni& eni = topo.eni(1);
  const std::string pod = topo.PodPath(0), ifname = "net1";

  auto host_ns = netlink::Netns::Current();
  auto host = host_ns.ok() ? netlink::OpenRtnl(*host_ns) : host_ns.error();
  if (!host.ok()) {
    std::cerr << "erdma-bench: " << host.error().msg << "\n";
    return false;
  }
  auto origin = ReadNodeState(**host, eni.name);
  if (!origin.ok()) {
    std::cerr << "erdma-bench: " << origin.error().msg << "\n";
    return false;
  }
  // The pod must be empty again after every DEL (links, rules, routes).
  auto pod_ns = netlink::Netns::Open(pod, "the pod");
  auto pod_k = pod_ns.ok() ? netlink::OpenRtnl(*pod_ns) : pod_ns.error();
  if (!pod_k.ok()) {
    std::cerr << "erdma-bench: " << pod_k.error().msg << "\n";
    return false;
  }
  auto pod_counts = [&]() -> std::string {
    auto l = (*pod_k)->ListLinks();
    auto ru = (*pod_k)->ListRules();
    auto ro = (*pod_k)->ListRoutes(0);
    if (!l.ok() || !ru.ok() || !ro.ok()) return "unreadable";
    return std::to_string(l->size()) + " links, " + std::to_string(ru->size()) + " rules, " +
           std::to_string(ro->size()) + " routes";
  };
  const std::string empty_pod = pod_counts();
  auto check_node = [&](const std::string& after) {
    if (const std::string now = pod_counts(); now != empty_pod) {
      std::cerr << "erdma-bench: after " << after << " the pod has " << now << " (empty: " << empty_pod
                << ")\n";
      return false;
    }
    auto now = ReadNodeState(**host, eni.name);
    std::string why = now.ok() ? "" : now.error().msg;
    if (now.ok() && SameNodeState(*origin, *now, &why)) return true;
    std::cerr << "erdma-bench: after " << after << " the node's " << eni.name << " is not as before: " << why
              << "\n";
    return false;
  };

  const json ecfg = ErdmaConfig(opt, data_dir, eni.name);
  struct PluginRun {
    std::string key, label, binary;
    json config;
    std::string args = {};  // CNI_ARGS
  };
  std::vector<PluginRun> plugins = {{"erdma", "erdma-cni", opt.plugin, ecfg, ""}};
  // The same ADD with the device the kubelet gave the pod (device.resource).
  FakeKubelet kubelet;
  // The pass-through rows ask the same fake kubelet; `--only pass` runs them without the kubelet ADD rows.
  const bool pass = opt.Wants("kubelet") || opt.Wants("pass");
  if (pass) {
    r.kubelet_unavailable = kubelet.Start(eni.name);
    if (r.kubelet_unavailable.empty() && opt.Wants("kubelet")) {
      plugins.push_back({"kubelet", "erdma-cni device.resource", opt.plugin,
                         ErdmaKubeletConfig(opt, data_dir), kKubeletPodArgs});
      // A pool of the same device, for a pod with a GPU and for one without:
      // what ranking the pool for the pod's GPUs costs.
      plugins.push_back({"pool gpu", "erdma-cni device.pool, a GPU", opt.plugin,
                         ErdmaPoolConfig(opt, data_dir, eni.name), kKubeletPodArgs});
      plugins.push_back({"pool", "erdma-cni device.pool, no GPU", opt.plugin,
                         ErdmaPoolConfig(opt, data_dir, eni.name), kKubeletPlainPodArgs});
    } else if (!r.kubelet_unavailable.empty())
      r.kubelet_unavailable = "n/a (" + r.kubelet_unavailable + ")";
  } else {
    r.kubelet_unavailable = "not run (--only)";
  }
  for (const auto& v : opt.variants) {
    plugins.push_back(
        {"v:" + v.label, v.label, v.plugin, ErdmaConfig(opt, MakeDataDir(v.data_root), eni.name)});
    r.variant_labels.push_back(v.label);
  }
  FloorSpec spec;
  {
    auto parsed = conf::Parse(cni::Modes(), ecfg.dump());
    if (!parsed.ok()) {
      std::cerr << "erdma-bench: floor config: " << parsed.error().msg << "\n";
      return false;
    }
    spec.cfg = *parsed;
    spec.pod_netns = pod;
    spec.pod_if = ifname;
  }

  // Mode none: probe once; a build without it gets an n/a row.
  const json ncfg = NoneConfig(opt, data_dir);
  bool none = opt.Wants("none");
  if (none) {
    Outcome add =
        Spawn(Make(opt, opt.plugin, {"ADD", "bench-none-probe", topo.TerwayPodPath(), "eth0", ncfg}));
    if (add.exit != 0) {
      r.none_unavailable = "n/a (mode none not available in this build: " + Why(add) + ")";
      none = false;
    } else {
      Outcome del =
          Spawn(Make(opt, opt.plugin,
                     {"DEL", "bench-none-probe", topo.TerwayPodPath(), "eth0", WithPrev(ncfg, Parsed(add))}));
      if (!Ok(del, "mode none DEL (probe)")) return false;
    }
  } else {
    r.none_unavailable = "not run (--only)";
  }

  std::optional<MacvlanGroup> macvlan;  // the child modes, on an ENI stand-in and a pod of their own
  if (opt.Wants("macvlan") && !macvlan.emplace(opt, topo, data_dir, r).Prepare()) return false;
  // The node-scale rows: the ENI stand-ins and the pod before the macvlan group's (bench_main.cpp).
  std::optional<ScaleGroup> scale;
  if (opt.Wants("scale")) {
    const int after = opt.Wants("macvlan") ? 1 : 0;
    if (!scale.emplace(opt, topo, topo.enis() - after - ScaleGroup::kEnis + 1, topo.pods() - after - 1, r)
             .Prepare())
      return false;
  }

  r.driver_rss_anon_kib = SelfStatusKib("RssAnon");
  // Every ADD and DEL starts after the same pause, and the order of the
  // variants rotates from one iteration to the next: how long the kernel
  // takes to move a link depends on what the link went through just before
  // (it comes back up at the end of each DEL), so a fixed order would charge
  // one variant for another's leftovers.
  std::vector<Unit> units;
  if (opt.Wants("floor")) {
    units.push_back([&](int, bool rec, bool verify) {
      Settle(opt);
      const double w0 = NowMs(), c0 = ThreadCpuMs();
      auto att = FloorAdd(spec);
      const double w1 = NowMs(), c1 = ThreadCpuMs();
      if (!att.ok()) {
        std::cerr << "erdma-bench: floor ADD: " << att.error().msg << " (" << att.error().details << ")\n";
        return false;
      }
      Settle(opt);
      const double w2 = NowMs(), c2 = ThreadCpuMs();
      auto del = FloorDel(spec, *att);
      const double w3 = NowMs(), c3 = ThreadCpuMs();
      if (!del.ok()) {
        std::cerr << "erdma-bench: floor DEL: " << del.error().msg << " (" << del.error().details << ")\n";
        return false;
      }
      if (rec) {
        r.rows["floor ADD"].Add(w1 - w0, c1 - c0);
        r.rows["floor DEL"].Add(w3 - w2, c3 - c2);
      }
      return !verify || check_node("floor DEL");
    });
    // The floor as a process: the same requests exec'd in a static image of
    // their own, its exec, start-up and exit included.
    units.push_back([&](int, bool rec, bool verify) {
      return ExecFloor(opt, pod, ifname, json{{"config", ecfg}}, r, rec, "floor exec") &&
             (!verify || check_node("exec'd floor DEL"));
    });
  }
  if (opt.Wants("erdma")) {
    for (size_t v = 0; v < plugins.size(); ++v) {
      units.push_back([&, v](int it, bool rec, bool verify) {
        const PluginRun& p = plugins[v];
        const std::string cid = "bench-e" + std::to_string(v) + "-" + std::to_string(it);
        Settle(opt);
        Outcome add = Spawn(Make(opt, p.binary, {"ADD", cid, pod, ifname, p.config, p.args}));
        if (!Ok(add, p.label + " ADD")) return false;
        Settle(opt);
        Outcome del =
            Spawn(Make(opt, p.binary, {"DEL", cid, pod, ifname, WithPrev(p.config, Parsed(add)), p.args}));
        if (!Ok(del, p.label + " DEL")) return false;
        if (rec) {
          r.rows[p.key + " ADD"].Add(add.wall_ms, add.cpu_ms, static_cast<double>(add.maxrss_kib));
          r.rows[p.key + " DEL"].Add(del.wall_ms, del.cpu_ms, static_cast<double>(del.maxrss_kib));
          AddPhases(r, p.label + " ADD", add);
          AddPhases(r, p.label + " DEL", del);
        }
        return !verify || check_node(p.label + " DEL");
      });
    }
  }
  if (opt.Wants("go")) {
    units.push_back([&](int it, bool rec, bool verify) {
      const std::string cid = "bench-g-" + std::to_string(it);
      const json hcfg = HostDeviceConfig(eni);
      Settle(opt);
      Outcome a1 = Spawn(Make(opt, hd, {"ADD", cid, pod, ifname, hcfg}));
      if (!Ok(a1, "host-device ADD")) return false;
      Outcome a2 = Spawn(Make(opt, sbr, {"ADD", cid, pod, ifname, WithPrev(SbrConfig(), Parsed(a1))}));
      if (!Ok(a2, "sbr ADD")) return false;
      // libcni hands every plugin of the list the list's cached result on DEL.
      const json final_result = Parsed(a2);
      Settle(opt);
      Outcome d1 = Spawn(Make(opt, sbr, {"DEL", cid, pod, ifname, WithPrev(SbrConfig(), final_result)}));
      if (!Ok(d1, "sbr DEL")) return false;
      Outcome d2 = Spawn(Make(opt, hd, {"DEL", cid, pod, ifname, WithPrev(hcfg, final_result)}));
      if (!Ok(d2, "host-device DEL")) return false;
      if (rec) {
        auto rss = [](const Outcome& a, const Outcome& b) {
          return static_cast<double>(std::max(a.maxrss_kib, b.maxrss_kib));
        };
        r.rows["host-device ADD"].Add(a1.wall_ms, a1.cpu_ms, static_cast<double>(a1.maxrss_kib));
        r.rows["sbr ADD"].Add(a2.wall_ms, a2.cpu_ms, static_cast<double>(a2.maxrss_kib));
        r.rows["sbr DEL"].Add(d1.wall_ms, d1.cpu_ms, static_cast<double>(d1.maxrss_kib));
        r.rows["host-device DEL"].Add(d2.wall_ms, d2.cpu_ms, static_cast<double>(d2.maxrss_kib));
        r.rows["go ADD"].Add(a1.wall_ms + a2.wall_ms, a1.cpu_ms + a2.cpu_ms, rss(a1, a2));
        r.rows["go DEL"].Add(d1.wall_ms + d2.wall_ms, d1.cpu_ms + d2.cpu_ms, rss(d1, d2));
      }
      // host-device returns the device bare (down, no addresses, no routes):
      // put the node back as it was, untimed, so every variant starts alike.
      auto restored = RestoreNodeState(**host, *origin);
      if (!restored.ok()) {
        std::cerr << "erdma-bench: restoring " << eni.name << " after the Go chain: " << restored.error().msg
                  << "\n";
        return false;
      }
      return !verify || check_node("the Go chain's DEL and the restore");
    });
  }
  if (none) {
    units.push_back([&](int it, bool rec, bool) {
      const std::string cid = "bench-n-" + std::to_string(it);
      Outcome add = Spawn(Make(opt, opt.plugin, {"ADD", cid, topo.TerwayPodPath(), "eth0", ncfg}));
      if (!Ok(add, "mode none ADD")) return false;
      Outcome del = Spawn(
          Make(opt, opt.plugin, {"DEL", cid, topo.TerwayPodPath(), "eth0", WithPrev(ncfg, Parsed(add))}));
      if (!Ok(del, "mode none DEL")) return false;
      if (rec) {
        r.rows["none ADD"].Add(add.wall_ms, add.cpu_ms, static_cast<double>(add.maxrss_kib));
        r.rows["none DEL"].Add(del.wall_ms, del.cpu_ms, static_cast<double>(del.maxrss_kib));
        AddPhases(r, "none ADD", add);
        AddPhases(r, "none DEL", del);
      }
      return true;
    });
  }
  // A chained pod that asked for nothing: every pod of the node pays this.
  if (pass && r.kubelet_unavailable.empty()) {
    // On a node the dataDir exists from the first attachment on: a DEL's look goes inside, alone too.
    std::error_code made;
    std::filesystem::create_directories(data_dir, made);
    std::filesystem::permissions(data_dir, std::filesystem::perms::owner_all, made);
    const json pcfg = PassThroughConfig(data_dir);
    const json pool_cfg = PoolPassThroughConfig(data_dir);
    units.push_back([&, pcfg, pool_cfg](int it, bool rec, bool verify) {
      const std::string cid = "bench-pass-" + std::to_string(it);
      // VERSION as the runtime asks it, measured as these two are (after the same pause, in the same unit):
      // what they are judged against, iteration by iteration.
      Settle(opt);
      Outcome ver = Spawn(Make(opt, opt.plugin, {"VERSION", "", "", "", json{{"cniVersion", kVersion}}}));
      if (!Ok(ver, "pass-through unit's VERSION")) return false;
      Settle(opt);
      Outcome add = Spawn(
          Make(opt, opt.plugin, {"ADD", cid, topo.TerwayPodPath(), "eth0", pcfg, kKubeletPlainPodArgs}));
      if (!Ok(add, "pass-through ADD")) return false;
      if (verify && Parsed(add) != pcfg["prevResult"]) {
        std::cerr << "erdma-bench: the pass-through ADD changed prevResult: " << add.out << "\n";
        return false;
      }
      // The recipe without a device plugin: the pod's annotations say it asked for nothing, no kubelet asked.
      Settle(opt);
      Outcome pool_add = Spawn(
          Make(opt, opt.plugin, {"ADD", cid, topo.TerwayPodPath(), "eth0", pool_cfg, kKubeletPlainPodArgs}));
      if (!Ok(pool_add, "pass-through ADD of the pool recipe")) return false;
      if (verify && Parsed(pool_add) != pool_cfg["prevResult"]) {
        std::cerr << "erdma-bench: the pool recipe's pass-through ADD changed prevResult: " << pool_add.out
                  << "\n";
        return false;
      }
      Settle(opt);
      Outcome del = Spawn(
          Make(opt, opt.plugin, {"DEL", cid, topo.TerwayPodPath(), "eth0", pcfg, kKubeletPlainPodArgs}));
      if (!Ok(del, "pass-through DEL")) return false;
      // Each --variant's pass-through ADD and DEL in the same unit, after the same pause: side by side.
      for (const auto& v : opt.variants) {
        Settle(opt);
        Outcome vadd = Spawn(
            Make(opt, v.plugin, {"ADD", cid, topo.TerwayPodPath(), "eth0", pcfg, kKubeletPlainPodArgs}));
        if (!Ok(vadd, "pass-through ADD of " + v.label)) return false;
        Settle(opt);
        Outcome vdel = Spawn(
            Make(opt, v.plugin, {"DEL", cid, topo.TerwayPodPath(), "eth0", pcfg, kKubeletPlainPodArgs}));
        if (!Ok(vdel, "pass-through DEL of " + v.label)) return false;
        if (rec) {
          r.rows["pass ADD v:" + v.label].Add(vadd.wall_ms, vadd.cpu_ms,
                                              static_cast<double>(vadd.maxrss_kib));
          r.rows["pass DEL v:" + v.label].Add(vdel.wall_ms, vdel.cpu_ms,
                                              static_cast<double>(vdel.maxrss_kib));
        }
      }
      if (rec) {
        r.rows["pass VERSION"].Add(ver.wall_ms, ver.cpu_ms, static_cast<double>(ver.maxrss_kib));
        r.rows["pass ADD"].Add(add.wall_ms, add.cpu_ms, static_cast<double>(add.maxrss_kib));
        r.rows["pass DEL"].Add(del.wall_ms, del.cpu_ms, static_cast<double>(del.maxrss_kib));
        r.rows["pass pool ADD"].Add(pool_add.wall_ms, pool_add.cpu_ms,
                                    static_cast<double>(pool_add.maxrss_kib));
        AddPhases(r, "pass-through VERSION", ver);
        AddPhases(r, "pass-through ADD", add);
        AddPhases(r, "pass-through ADD, pool recipe", pool_add);
        AddPhases(r, "pass-through DEL", del);
      }
      return true;
    });
  }
  if (macvlan) macvlan->AddUnits(units);
  if (scale) scale->AddUnits(units);
  // Calibration: the process alone (start, answer VERSION, exit) and a trivial exec.
  units.push_back([&](int, bool rec, bool) {
    if (opt.Wants("erdma")) {
      Outcome ver = Spawn(Make(opt, opt.plugin, {"VERSION", "", "", "", json{{"cniVersion", kVersion}}}));
      if (!Ok(ver, "erdma-cni VERSION")) return false;
      if (rec) r.rows["erdma VERSION"].Add(ver.wall_ms, ver.cpu_ms, static_cast<double>(ver.maxrss_kib));
    }
    Invocation t;
    t.argv = {"/bin/true"};
    Outcome o = Spawn(t);
    if (rec) r.rows["true"].Add(o.wall_ms, o.cpu_ms, static_cast<double>(o.maxrss_kib));
    // A static do-nothing, and the same blocked as long as a device move
    // blocks an ADD or DEL: what the exit costs after a sleep.
    const std::pair<const char*, std::vector<std::string>> idles[] = {
        {"idle", {ERDMA_BENCH_IDLE}}, {"idle blocked", {ERDMA_BENCH_IDLE, std::to_string(kIdleBlockMs)}}};
    for (const auto& [row, argv] : idles) {
      Invocation i;
      i.argv = argv;
      Outcome io = Spawn(i);
      if (io.exit != 0) {
        std::cerr << "erdma-bench: " << ERDMA_BENCH_IDLE << " exited " << io.exit << "\n";
        return false;
      }
      if (rec) r.rows[row].Add(io.wall_ms, io.cpu_ms, static_cast<double>(io.maxrss_kib));
    }
    return true;
  });

  const int total = opt.warmup + opt.iterations;
  for (int it = 0; it < total; ++it) {
    if (it % 50 == 0) std::cerr << "erdma-bench: iteration " << it << "/" << total << "\n";
    for (size_t k = 0; k < units.size(); ++k) {
      if (!units[(k + static_cast<size_t>(it)) % units.size()](it, it >= opt.warmup, it < opt.warmup))
        return false;
    }
  }
  if (!check_node("the last iteration")) return false;
  if (macvlan && !macvlan->Check("the last iteration")) return false;
  if (scale && !scale->Finish()) return false;

  if (opt.Wants("parallel")) {
    for (int n : opt.parallel) {
      if (n > topo.enis()) continue;
      ParallelRun pr;
      pr.n = n;
      std::vector<FloorSpec> specs;
      for (int i = 0; i < n; ++i) {
        FloorSpec s = spec;
        s.cfg.device.value = topo.eni(i + 1).name;
        s.pod_netns = topo.PodPath(i);
        specs.push_back(s);
      }
      for (int round = 0; round <= opt.parallel_iterations; ++round) {  // round 0: warm-up
        std::cerr << "erdma-bench: " << n << " parallel ADDs, round " << round << "/"
                  << opt.parallel_iterations << "\n";
        if (opt.Wants("floor")) {
          double fa = 0, fd = 0;
          if (!ParallelFloor(specs, &fa, &fd)) {
            std::cerr << "erdma-bench: " << n << " parallel floor ADDs/DELs failed\n";
            return false;
          }
          if (round > 0) {
            pr.floor_add_total_ms.push_back(fa);
            pr.floor_del_total_ms.push_back(fd);
          }
        }
        std::vector<Invocation> adds, dels;
        std::vector<Call> calls;
        for (int i = 0; i < n; ++i) {
          calls.push_back(
              {"ADD", "bench-p" + std::to_string(n) + "-" + std::to_string(round) + "-" + std::to_string(i),
               topo.PodPath(i), ifname, ErdmaConfig(opt, data_dir, topo.eni(i + 1).name)});
          adds.push_back(Make(opt, opt.plugin, calls.back()));
        }
        double add_total = 0, del_total = 0;
        std::vector<Outcome> outs = SpawnAll(adds, &add_total);
        bool all_ok = true;
        for (int i = 0; i < n; ++i) {
          all_ok = Ok(outs[static_cast<size_t>(i)], "parallel erdma-cni ADD " + std::to_string(i)) && all_ok;
          Call del = calls[static_cast<size_t>(i)];
          del.command = "DEL";
          del.config = WithPrev(del.config, Parsed(outs[static_cast<size_t>(i)]));
          dels.push_back(Make(opt, opt.plugin, del));
        }
        std::vector<Outcome> douts = SpawnAll(dels, &del_total);
        for (int i = 0; i < n; ++i)
          all_ok = Ok(douts[static_cast<size_t>(i)], "parallel erdma-cni DEL " + std::to_string(i)) && all_ok;
        if (!all_ok) return false;
        if (round == 0) continue;
        pr.add_total_ms.push_back(add_total);
        pr.del_total_ms.push_back(del_total);
        for (const auto& o : outs) {
          pr.add_each_wall_ms.push_back(o.wall_ms);
          pr.add_each_cpu_ms.push_back(o.cpu_ms);
        }
      }
      r.parallel.push_back(pr);
    }
    if (!check_node("the parallel rounds")) return false;
  }
  return true;
}

bool RunProfile(const Options& opt, const Topology& topo) {
  const std::string data_dir = MakeDataDir(opt.data_root);
  const Eni& eni = topo.eni(1);
  std::string pod = topo.PodPath(0), ifname = "net1";
  json ecfg = ErdmaConfig(opt, data_dir, eni.name);
  if (opt.profile_mode == "none") {  // chained after Terway, on its interface
    pod = topo.TerwayPodPath();
    ifname = "eth0";
    ecfg = NoneConfig(opt, data_dir);
  } else if (opt.profile_mode == "macvlan") {
    ecfg = ErdmaMacvlanConfig(data_dir, eni.name);
  }
  for (int i = 0; i <= 3; ++i) {
    const bool wrapped = i == 3;
    const std::string cid = "bench-prof-" + std::to_string(i);
    // "%c" in the wrapper's arguments becomes the command, so ADD and DEL write separate files.
    auto wrap = [&](const std::string& command) {
      std::vector<std::string> w;
      if (!wrapped) return w;
      for (std::string a : opt.profile) {
        for (size_t at; (at = a.find("%c")) != std::string::npos;) a.replace(at, 2, command);
        w.push_back(a);
      }
      return w;
    };
    Outcome add = Spawn(Make(opt, opt.plugin, {"ADD", cid, pod, ifname, ecfg}, wrap("ADD")));
    if (wrapped)
      std::cerr << "--- wrapped ADD: exit " << add.exit << ", wall " << add.wall_ms << " ms\n" << add.err;
    if (!Ok(add, "erdma-cni ADD")) return false;
    Outcome del =
        Spawn(Make(opt, opt.plugin, {"DEL", cid, pod, ifname, WithPrev(ecfg, Parsed(add))}, wrap("DEL")));
    if (wrapped)
      std::cerr << "--- wrapped DEL: exit " << del.exit << ", wall " << del.wall_ms << " ms\n" << del.err;
    if (!Ok(del, "erdma-cni DEL")) return false;
  }
  return true;
}

}  // namespace bench

#include "integration/bench/scale.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "integration/bench/spawn.h"
#include "netlink/netns.h"
#include "netlink/rtnl_socket.h"

namespace bench {

using nlohmann::json;

namespace {

// The busy node's addresses: the move devices' in 10.11.0.0/16, the macvlan
// children's in 10.10.0.0/16, each subnet's gateway at .0.1.
constexpr const char* kMoveNet = "10.11";
constexpr const char* kChildNet = "10.10";

// The i-th address of a /16 from .0.2 on, skipping .255 and .0.
std::string BusyAddress(const char* net, int i) {
  return std::string(net) + "." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 2);
}

std::string BusyDevice(int i) { return "sc" + std::to_string(i); }

// Runs `cmd` (an `ip -batch -`) with `script` on its stdin.
bool Batch(const std::string& cmd, const std::string& script) {
  FILE* p = popen(cmd.c_str(), "w");
  if (!p) {
    std::cerr << "erdma-bench: scale rows: popen " << cmd << " failed\n";
    return false;
  }
  fwrite(script.data(), 1, script.size(), p);
  const int st = pclose(p);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
  std::cerr << "erdma-bench: scale rows: " << cmd << " failed (status " << st << ")\n";
  return false;
}

}  // namespace

// The group's devices are the topology's ENI stand-ins from first_eni on,
// which no other row uses (the driver adds them for it).
ScaleGroup::ScaleGroup(const Options& opt, const Topology& topo, int first_eni, int pod, Results& r)
    : opt_(opt), topo_(topo), r_(r), n_(opt.scale), pod_(topo.PodPath(pod)) {
  for (int i = 0; i < kEnis; ++i) devices_.push_back(topo.eni(first_eni + i));
}

std::string ScaleGroup::BusyPod(char kind, int i) const {
  return topo_.prefix() + "s" + kind + std::to_string(i);
}

Call ScaleGroup::BusyCall(char kind, int i) const {
  const std::string id = std::string(1, kind) + std::to_string(i);
  if (kind == 'm')
    return {"ADD", "bench-scale-" + id, "/run/netns/" + BusyPod(kind, i), kPodIf,
            ErdmaConfig(opt_, busy_dir_, BusyDevice(i))};
  return {"ADD", "bench-scale-" + id, "/run/netns/" + BusyPod(kind, i), kPodIf,
          ErdmaMacvlanConfig(busy_dir_, devices_[2].name, BusyAddress(kChildNet, i) + "/16",
                             std::string(kChildNet) + ".0.1")};
}

std::string ScaleGroup::PodCounts() { return bench::PodCounts(*pod_k_); }

std::string ScaleGroup::NodeLinks() { return bench::NodeLinks(*host_); }

bool ScaleGroup::Prepare() {
  auto fail = [](const std::string& why) {
    std::cerr << "erdma-bench: scale rows: " << why << "\n";
    return false;
  };
  if (n_ < 1) return fail("--scale must be at least 1");
  auto host_ns = netlink::Netns::Current();
  auto host = host_ns.ok() ? netlink::OpenRtnl(*host_ns) : host_ns.error();
  if (!host.ok()) return fail(host.error().msg);
  host_ = std::move(host).value();
  auto pod_ns = netlink::Netns::Open(pod_, "the scale pod");
  auto pod = pod_ns.ok() ? netlink::OpenRtnl(*pod_ns) : pod_ns.error();
  if (!pod.ok()) return fail(pod.error().msg);
  pod_k_ = std::move(pod).value();
  for (const Eni& e : devices_) {
    auto state = ReadNodeState(*host_, e.name);
    if (!state.ok()) return fail(state.error().msg);
    origins_.push_back(*state);
  }
  pod_counts_ = PodCounts();
  node_links_ = NodeLinks();
  empty_dir_ = MakeDataDir(opt_.data_root);
  busy_dir_ = MakeDataDir(opt_.data_root);

  const std::string& move = devices_[0].name;
  const std::string& parent0 = devices_[1].name;
  const std::string& parent_n = devices_[2].name;
  std::vector<std::string> rails;
  for (size_t i = 3; i < devices_.size(); ++i) rails.push_back(devices_[i].name);
  r_.scale_n = n_;
  r_.scale_where = "move and pool rows " + move + ", macvlan parents " + parent0 + " (no children) and " +
                   parent_n + " (" + std::to_string(n_) + " children), rails " + rails.front() + ".." +
                   rails.back() + ", one pod; the busy node: " + std::to_string(n_) +
                   " veths sc0.. (their peers in the vpc netns) each moved into a pod of its own, " +
                   std::to_string(n_) + " children of " + parent_n + " each in a pod of its own";
  variants_ = {
      {"scale move 0", "scale move, empty node", ErdmaConfig(opt_, empty_dir_, move)},
      {"scale move N", "scale move, busy node", ErdmaConfig(opt_, busy_dir_, move)},
      {"scale macvlan 0", "scale macvlan, parent without children", ErdmaMacvlanConfig(empty_dir_, parent0)},
      {"scale macvlan N", "scale macvlan, parent with N children", ErdmaMacvlanConfig(busy_dir_, parent_n)},
      {"scale group 8", "scale pool of 8, count 8", ErdmaPoolConfig(opt_, empty_dir_, rails, kRails)},
      {"scale group 1", "scale pool of 8, count 1", ErdmaPoolConfig(opt_, empty_dir_, rails, 1)},
      {"scale pool", "scale pool of one, no kubelet", ErdmaPoolConfig(opt_, empty_dir_, move)},
  };
  // The busy devices are in their pods then: the node's links are as before them.
  return MakeBusy() && Check("making the busy node");
}

bool ScaleGroup::MakeBusy() {
  const double t0 = NowMs();
  std::ostringstream node, vpc, pods;
  for (int i = 0; i < n_; ++i) {
    const std::string dev = BusyDevice(i), ip = BusyAddress(kMoveNet, i), m = std::to_string(1000 + i);
    node << "link add " << dev << " type veth peer name scp" << i << " netns " << topo_.vpc() << "\n"
         << "addr add " << ip << "/16 dev " << dev << " noprefixroute\n"
         << "link set " << dev << " up\n"
         << "route add " << kMoveNet << ".0.0/16 dev " << dev << " proto static scope link src " << ip
         << " metric " << m << "\n"
         << "route add default via " << kMoveNet << ".0.1 dev " << dev << " metric " << m << "\n";
    vpc << "link set scp" << i << " up\n";
    for (char kind : {'m', 'v'}) {
      busy_pods_.push_back(BusyPod(kind, i));
      pods << "netns add " << busy_pods_.back() << "\n";
    }
  }
  veths_ = true;
  if (!Batch("ip -batch -", node.str()) || !Batch("ip -n " + topo_.vpc() + " -batch -", vpc.str()) ||
      !Batch("ip -batch -", pods.str()))
    return false;
  for (const std::string& name : busy_pods_) {  // lo up, as a runtime leaves a pod
    auto ns = netlink::Netns::Open("/run/netns/" + name, "a busy pod");
    auto k = ns.ok() ? netlink::OpenRtnl(*ns) : ns.error();
    base::Status up = k.ok() ? (*k)->SetUp(1, true) : k.error();
    if (!up.ok()) {
      std::cerr << "erdma-bench: scale rows: " << name << ": lo up: " << up.error().msg << "\n";
      return false;
    }
  }
  // The attachments, a move and a child at a time: the node fills as a node does.
  double calls_ms = 0;
  for (int i = 0; i < n_; ++i) {
    if (i % 64 == 0)
      std::cerr << "erdma-bench: scale rows: busy attachments " << 2 * i << "/" << 2 * n_ << "\n";
    for (char kind : {'m', 'v'}) {
      const Call c = BusyCall(kind, i);
      Outcome add = Spawn(Make(opt_, opt_.plugin, c));
      calls_ms += add.wall_ms;
      if (!Ok(add, "busy attachment ADD " + c.container_id)) return false;
      busy_.push_back({kind, i, add.out});
      (kind == 'm' ? r_.scale_fill_move_cpu_ms : r_.scale_fill_macvlan_cpu_ms).push_back(add.cpu_ms);
    }
  }
  r_.scale_setup_s = (NowMs() - t0) / 1000;
  r_.scale_setup_calls_s = calls_ms / 1000;
  std::cerr << "erdma-bench: scale rows: the busy node made in " << r_.scale_setup_s << " s\n";
  return true;
}

bool ScaleGroup::Check(const std::string& after) {
  std::string why;
  if (const std::string now = PodCounts(); now != pod_counts_) {
    why = "the pod has " + now + " (before: " + pod_counts_ + ")";
  } else if (const std::string links = NodeLinks(); links != node_links_) {
    why = "the node's links are " + links + " (before: " + node_links_ + ")";
  } else {
    for (size_t i = 0; i < devices_.size() && why.empty(); ++i) {
      auto now = ReadNodeState(*host_, devices_[i].name);
      if (!now.ok())
        why = now.error().msg;
      else if (!SameNodeState(origins_[i], *now, &why))
        why = devices_[i].name + " is not as before: " + why;
    }
    if (why.empty()) return true;
  }
  std::cerr << "erdma-bench: after " << after << ", " << why << "\n";
  return false;
}

void ScaleGroup::AddUnits(std::vector<Unit>& units) {
  for (size_t v = 0; v < variants_.size(); ++v)
    units.push_back([this, v](int it, bool rec, bool verify) {
      const Variant& x = variants_[v];
      const std::string cid = "bench-sc" + std::to_string(v) + "-" + std::to_string(it);
      Settle(opt_);
      Outcome add = Spawn(Make(opt_, opt_.plugin, {"ADD", cid, pod_, kPodIf, x.config}));
      if (!Ok(add, x.label + " ADD")) return false;
      Settle(opt_);
      Outcome del =
          Spawn(Make(opt_, opt_.plugin, {"DEL", cid, pod_, kPodIf, WithPrev(x.config, Parsed(add))}));
      if (!Ok(del, x.label + " DEL")) return false;
      if (rec) {
        r_.rows[x.key + " ADD"].Add(add.wall_ms, add.cpu_ms, Rss(add));
        r_.rows[x.key + " DEL"].Add(del.wall_ms, del.cpu_ms, Rss(del));
        AddPhases(r_, x.label + " ADD", add);
        AddPhases(r_, x.label + " DEL", del);
      }
      return !verify || Check(x.label + " DEL");
    });
}

bool ScaleGroup::Finish() {
  const double t0 = NowMs();
  double calls_ms = 0;
  bool ok = true;
  // Last made, first removed; every DEL is tried, whatever one before it did.
  for (auto b = busy_.rbegin(); b != busy_.rend(); ++b) {
    Call del = BusyCall(b->kind, b->i);
    del.command = "DEL";
    del.config = WithPrev(del.config, json::parse(b->result, nullptr, /*allow_exceptions=*/false));
    Outcome o = Spawn(Make(opt_, opt_.plugin, del));
    calls_ms += o.wall_ms;
    ok = Ok(o, "busy attachment DEL " + del.container_id) && ok;
  }
  const size_t made = busy_.size();
  busy_.clear();
  // Every busy device is home again, as its ADD found it (by name: what DEL restores).
  if (ok && made > 0) {
    auto links = host_->ListLinks();
    int home = 0;
    if (links.ok())
      for (const auto& l : *links)
        if (l.name.rfind("sc", 0) == 0 && l.up) ++home;
    if (home != n_) {
      std::cerr << "erdma-bench: scale rows: after the busy DELs " << home << " of the " << n_
                << " busy devices are up on the node\n";
      ok = false;
    }
  }
  std::ostringstream pods, node;
  for (const std::string& name : busy_pods_) pods << "netns del " << name << "\n";
  if (veths_)
    for (int i = 0; i < n_; ++i) node << "link del " << BusyDevice(i) << "\n";
  ok = (busy_pods_.empty() || Batch("ip -batch -", pods.str())) && ok;
  ok = (!veths_ || Batch("ip -batch -", node.str())) && ok;
  busy_pods_.clear();
  veths_ = false;
  r_.scale_teardown_s = (NowMs() - t0) / 1000;
  r_.scale_teardown_calls_s = calls_ms / 1000;
  std::cerr << "erdma-bench: scale rows: the busy node removed in " << r_.scale_teardown_s << " s\n";
  return Check("removing the busy node") && ok;
}

}  // namespace bench

#include "integration/bench/children.h"

#include <algorithm>
#include <iostream>

#include "cni/driver/registry.h"
#include "integration/bench/calls.h"
#include "integration/bench/spawn.h"
#include "netlink/netns.h"
#include "netlink/rtnl_socket.h"

namespace bench {

using nlohmann::json;

// The group's parent and pod are the topology's last ENI and pod, which no
// other row uses while the iterations run (the driver adds them for it).
MacvlanGroup::MacvlanGroup(const Options& opt, const Topology& topo, const std::string& data_dir, Results& r)
    : opt_(opt),
      r_(r),
      parent_(topo.eni(topo.enis())),
      pod_(topo.PodPath(topo.pods() - 1)),
      ecfg_(ErdmaMacvlanConfig(data_dir, parent_.name)),
      gcfg_(MacvlanConfig(parent_.name)) {}

std::string PodCounts(netlink::Kernel& pod) {
  auto l = pod.ListLinks();
  auto ru = pod.ListRules();
  auto ro = pod.ListRoutes(0);
  if (!l.ok() || !ru.ok() || !ro.ok()) return "unreadable";
  return std::to_string(l->size()) + " links, " + std::to_string(ru->size()) + " rules, " +
         std::to_string(ro->size()) + " routes";
}

// The node's link names: a child left behind on the node (a Go plugin that
// made it there first) would show here.
std::string NodeLinks(netlink::Kernel& node) {
  auto links = node.ListLinks();
  if (!links.ok()) return "unreadable";
  std::vector<std::string> names;
  for (const auto& l : *links) names.push_back(l.name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string MacvlanGroup::PodCounts() { return bench::PodCounts(*pod_k_); }

std::string MacvlanGroup::NodeLinks() { return bench::NodeLinks(*host_); }

bool MacvlanGroup::Prepare() {
  auto fail = [](const std::string& why) {
    std::cerr << "erdma-bench: macvlan rows: " << why << "\n";
    return false;
  };
  auto host_ns = netlink::Netns::Current();
  auto host = host_ns.ok() ? netlink::OpenRtnl(*host_ns) : host_ns.error();
  if (!host.ok()) return fail(host.error().msg);
  host_ = std::move(host).value();
  auto pod_ns = netlink::Netns::Open(pod_, "the macvlan pod");
  auto pod = pod_ns.ok() ? netlink::OpenRtnl(*pod_ns) : pod_ns.error();
  if (!pod.ok()) return fail(pod.error().msg);
  pod_k_ = std::move(pod).value();
  auto state = ReadNodeState(*host_, parent_.name);
  if (!state.ok()) return fail(state.error().msg);
  parent_state_ = *state;
  node_links_ = NodeLinks();
  pod_counts_ = PodCounts();
  r_.macvlan_where = parent_.name + ", a pod of their own";

  auto parsed = conf::Parse(cni::Modes(), ecfg_.dump());
  if (!parsed.ok()) return fail("floor config: " + parsed.error().msg);
  floor_.cfg = *parsed;
  floor_.pod_netns = pod_;
  floor_.pod_if = kPodIf;
  auto address = netlink::IpPrefix::Parse(kChildAddress);
  auto gateway = netlink::IpAddress::Parse(kGateway);
  if (!address || !gateway) return fail("bad kChildAddress or kGateway");
  floor_.ips = {ipam::IpConfig{*address, *gateway}};

  // erdma-cni's macvlan mode: probe once, as for mode none.
  Outcome add = Spawn(Make(opt_, opt_.plugin, {"ADD", "bench-macvlan-probe", pod_, kPodIf, ecfg_}));
  if (add.exit != 0) {
    r_.macvlan_unavailable = "n/a (mode macvlan not available in this build: " + Why(add) + ")";
    erdma_ = false;
  } else {
    Outcome del = Spawn(
        Make(opt_, opt_.plugin, {"DEL", "bench-macvlan-probe", pod_, kPodIf, WithPrev(ecfg_, Parsed(add))}));
    if (!Ok(del, "erdma-cni macvlan DEL (probe)")) return false;
  }
  return Check("the macvlan probe");
}

bool MacvlanGroup::Check(const std::string& after) {
  std::string why;
  if (const std::string now = PodCounts(); now != pod_counts_) {
    why = "the pod has " + now + " (before: " + pod_counts_ + ")";
  } else if (NodeLinks() != node_links_) {
    why = "the node's links are " + NodeLinks() + " (before: " + node_links_ + ")";
  } else {
    auto now_state = ReadNodeState(*host_, parent_.name);
    if (!now_state.ok())
      why = now_state.error().msg;
    else if (SameNodeState(parent_state_, *now_state, &why))
      return true;
    else
      why = "the parent " + parent_.name + " is not as before: " + why;
  }
  std::cerr << "erdma-bench: after " << after << ", " << why << "\n";
  return false;
}

void MacvlanGroup::AddUnits(std::vector<Unit>& units) {
  units.push_back([this](int, bool rec, bool verify) { return FloorUnit(rec, verify); });
  units.push_back([this](int, bool rec, bool verify) {
    const json ips = json::array({{{"address", kChildAddress}, {"gateway", kGateway}}});
    return ExecFloor(opt_, pod_, kPodIf, json{{"config", ecfg_}, {"ips", ips}}, r_, rec,
                     "macvlan floor exec") &&
           (!verify || Check("the exec'd macvlan floor DEL"));
  });
  if (erdma_) units.push_back([this](int it, bool rec, bool verify) { return ErdmaUnit(it, rec, verify); });
  units.push_back([this](int it, bool rec, bool verify) { return GoUnit(it, rec, verify); });
  units.push_back([this](int it, bool rec, bool) { return StaticUnit(it, rec); });
}

bool MacvlanGroup::FloorUnit(bool rec, bool verify) {
  Settle(opt_);
  const double w0 = NowMs(), c0 = ThreadCpuMs();
  auto att = FloorAdd(floor_);
  const double w1 = NowMs(), c1 = ThreadCpuMs();
  if (!att.ok()) {
    std::cerr << "erdma-bench: macvlan floor ADD: " << att.error().msg << " (" << att.error().details
              << ")\n";
    return false;
  }
  Settle(opt_);
  const double w2 = NowMs(), c2 = ThreadCpuMs();
  auto del = FloorDel(floor_, *att);
  const double w3 = NowMs(), c3 = ThreadCpuMs();
  if (!del.ok()) {
    std::cerr << "erdma-bench: macvlan floor DEL: " << del.error().msg << " (" << del.error().details
              << ")\n";
    return false;
  }
  if (rec) {
    r_.rows["macvlan floor ADD"].Add(w1 - w0, c1 - c0);
    r_.rows["macvlan floor DEL"].Add(w3 - w2, c3 - c2);
  }
  return !verify || Check("the macvlan floor DEL");
}

bool MacvlanGroup::ErdmaUnit(int it, bool rec, bool verify) {
  const std::string cid = "bench-m-" + std::to_string(it);
  Settle(opt_);
  Outcome add = Spawn(Make(opt_, opt_.plugin, {"ADD", cid, pod_, kPodIf, ecfg_}));
  if (!Ok(add, "erdma-cni macvlan ADD")) return false;
  Settle(opt_);
  Outcome del = Spawn(Make(opt_, opt_.plugin, {"DEL", cid, pod_, kPodIf, WithPrev(ecfg_, Parsed(add))}));
  if (!Ok(del, "erdma-cni macvlan DEL")) return false;
  if (rec) {
    r_.rows["macvlan ADD"].Add(add.wall_ms, add.cpu_ms, Rss(add));
    r_.rows["macvlan DEL"].Add(del.wall_ms, del.cpu_ms, Rss(del));
    AddPhases(r_, "macvlan ADD", add);
    AddPhases(r_, "macvlan DEL", del);
  }
  return !verify || Check("erdma-cni macvlan DEL");
}

// As the host-device chain: macvlan with static IPAM, then sbr (so both sides
// install source-based policy routing); DEL in reverse, every plugin handed
// the chain's result as libcni does.
bool MacvlanGroup::GoUnit(int it, bool rec, bool verify) {
  const std::string cid = "bench-gm-" + std::to_string(it), mv = opt_.cni_dir + "/macvlan",
                    sbr = opt_.cni_dir + "/sbr";
  const json scfg = SbrConfig("bench-go-macvlan");
  Settle(opt_);
  Outcome a1 = Spawn(Make(opt_, mv, {"ADD", cid, pod_, kPodIf, gcfg_}));
  if (!Ok(a1, "macvlan ADD")) return false;
  Outcome a2 = Spawn(Make(opt_, sbr, {"ADD", cid, pod_, kPodIf, WithPrev(scfg, Parsed(a1))}));
  if (!Ok(a2, "sbr ADD (after macvlan)")) return false;
  const json final_result = Parsed(a2);
  Settle(opt_);
  Outcome d1 = Spawn(Make(opt_, sbr, {"DEL", cid, pod_, kPodIf, WithPrev(scfg, final_result)}));
  if (!Ok(d1, "sbr DEL (before macvlan)")) return false;
  Outcome d2 = Spawn(Make(opt_, mv, {"DEL", cid, pod_, kPodIf, WithPrev(gcfg_, final_result)}));
  if (!Ok(d2, "macvlan DEL")) return false;
  if (rec) {
    r_.rows["macvlan plugin ADD"].Add(a1.wall_ms, a1.cpu_ms, Rss(a1));
    r_.rows["macvlan sbr ADD"].Add(a2.wall_ms, a2.cpu_ms, Rss(a2));
    r_.rows["macvlan sbr DEL"].Add(d1.wall_ms, d1.cpu_ms, Rss(d1));
    r_.rows["macvlan plugin DEL"].Add(d2.wall_ms, d2.cpu_ms, Rss(d2));
    r_.rows["go macvlan ADD"].Add(a1.wall_ms + a2.wall_ms, a1.cpu_ms + a2.cpu_ms, std::max(Rss(a1), Rss(a2)));
    r_.rows["go macvlan DEL"].Add(d1.wall_ms + d2.wall_ms, d1.cpu_ms + d2.cpu_ms, std::max(Rss(d1), Rss(d2)));
  }
  return !verify || Check("the Go macvlan chain's DEL");
}

// Calibration: the static IPAM plugin alone, with the config the macvlan
// plugin hands it. Both the erdma-cni and the Go macvlan rows exec it once
// per ADD and once per DEL; the floor does not.
bool MacvlanGroup::StaticUnit(int it, bool rec) {
  const std::string cid = "bench-s-" + std::to_string(it), st = opt_.cni_dir + "/static";
  Outcome add = Spawn(Make(opt_, st, {"ADD", cid, pod_, kPodIf, gcfg_}));
  if (!Ok(add, "static ADD")) return false;
  Outcome del = Spawn(Make(opt_, st, {"DEL", cid, pod_, kPodIf, gcfg_}));
  if (!Ok(del, "static DEL")) return false;
  if (rec) {
    r_.rows["static ADD"].Add(add.wall_ms, add.cpu_ms, Rss(add));
    r_.rows["static DEL"].Add(del.wall_ms, del.cpu_ms, Rss(del));
  }
  return true;
}

}  // namespace bench

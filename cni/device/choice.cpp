#include "cni/device/choice.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_set>

#include "base/escape.h"
#include "base/file.h"
#include "base/log.h"
#include "cni/device/gpus.h"
#include "cni/device/lookup.h"
#include "cni/device/rails.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"
#include "conf/names.h"
#include "kubelet/pod_devices.h"
#include "netlink/rdma_pairing.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;

using By = conf::DeviceSelector::By;

namespace {

std::string Join(const std::vector<std::string>& v) { return conf::Join(v, ", "); }

// The sysfs directory of the PCI function behind a netdev: its `device`, or that device's parent (virtio0's
// PCI function). "" for a netdev without one (veth, a bridge).
std::string PciFunction(const std::string& sysfs_root, const std::string& ifname) {
  const std::string dev = sysfs_root + "/class/net/" + ifname + "/device";
  // The kernel's own symlinks lead there (base::PathExists refuses them).
  for (const std::string& dir : {dev, dev + "/.."})
    if (::access((dir + "/numa_node").c_str(), R_OK) == 0 && ::access((dir + "/vendor").c_str(), R_OK) == 0)
      return dir;
  return "";
}

// A sysfs attribute of the PCI function `dir` ("" when there is none).
std::string Attr(const std::string& dir, const char* attr) {
  if (dir.empty()) return "";
  auto v = base::ReadKernelFile(dir + "/" + attr, 64);
  if (!v.ok()) return "";
  while (!v->empty() && (v->back() == '\n' || v->back() == ' ')) v->pop_back();
  return *v;
}

std::optional<std::pair<std::string, std::string>> PodOf(const Env& env) {
  const auto ns = env.args.find("K8S_POD_NAMESPACE");
  const auto pod = env.args.find("K8S_POD_NAME");
  if (ns == env.args.end() || pod == env.args.end() || ns->second.empty() || pod->second.empty())
    return std::nullopt;
  return std::make_pair(ns->second, pod->second);
}

// The device a kubelet ID stands for: "erdma_0/17" and "erdma_0/3" are slots of one device.
std::string DeviceKey(const std::string& id) {
  auto rdma = netlink::ParseRdmaDeviceId(id);
  return rdma && rdma->instance ? rdma->name : id;
}

// The pod's ALIYUN_COM_GPU_MEM_IDX annotation, where the runtime passes the pod's annotations; "" otherwise.
std::string AckGpuIndex(const conf::Config& cfg) {
  auto a = cfg.runtime_config.find(conf::kPodAnnotationsCapability);
  if (a == cfg.runtime_config.end() || !a->is_object()) return "";
  auto v = a->find(kAckGpuIndexAnnotation);
  return v != a->end() && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace

Result<std::vector<DeviceCandidate>> PoolCandidates(Context& ctx, const conf::DevicePool& pool,
                                                    const kubelet::PodAllocation* gpus,
                                                    std::string* passed_over) {
  std::vector<netlink::LinkInfo> links;
  if (!pool.names.empty()) {
    for (const std::string& name : pool.names) {
      if (std::any_of(links.begin(), links.end(), [&](const netlink::LinkInfo& l) { return l.name == name; }))
        continue;
      ASSIGN_OR_RETURN(auto link, ctx.host.FindLink(name));
      if (link) links.push_back(std::move(*link));
    }
  } else {
    ASSIGN_OR_RETURN(links, ctx.host.ListLinks());
  }
  std::vector<netlink::RdmaDevice> rdma_devices;
  std::vector<netlink::RdmaPort> rdma_ports;
  if (!pool.rdma_driver.empty()) {
    std::unique_ptr<netlink::Rdma> rdma_owned;
    auto rdma = NodeRdma(ctx, rdma_owned);
    if (!rdma.ok())
      return Error(Code::kRdmaUnavailable,
                   "device.pool.rdmaDriver \"" + pool.rdma_driver +
                       "\": the node's kernel has no RDMA netlink: " + rdma.error().msg);
    ASSIGN_OR_RETURN(rdma_devices, (*rdma)->ListDevices());
    ASSIGN_OR_RETURN(rdma_ports, (*rdma)->ListPorts());
  }
  // Without the pod's GPUs the pool ranks by name and reads no candidate's place in the PCIe tree.
  std::vector<RailGpu> rail_gpus;
  if (gpus && !gpus->gpus.empty()) {
    std::vector<std::string> lines;
    rail_gpus = LocatePodGpus(gpus->gpus, AckGpuIndex(ctx.cfg), ctx.sysfs_root, ctx.procfs_root, lines);
    for (const std::string& line : lines) base::Log::Info("device.pool: GPU " + line);
  }
  const StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  const bool alone = !ctx.cfg.child();
  std::vector<RailNic> nics;
  std::vector<std::string> skipped;
  // Each candidate's claim by its identity (without the claims' index, all of them read once).
  ClaimLookup claims(store.DevicesDir());
  for (const netlink::LinkInfo& l : links) {
    if (l.index == 1 || l.name == "lo") continue;
    if (!pool.names.empty() && std::find(pool.names.begin(), pool.names.end(), l.name) == pool.names.end())
      continue;
    // Each sysfs file is read only for a candidate still in the running, and once.
    std::optional<std::string> function;
    auto pci_function = [&]() -> const std::string& {
      if (!function) function = PciFunction(ctx.sysfs_root, l.name);
      return *function;
    };
    if (!pool.pci_vendor.empty() && Attr(pci_function(), "vendor") != pool.pci_vendor) continue;
    // A name no state can hold (ADD refuses it, add.cpp) is passed over, not the whole pool's failure.
    if (!conf::IsValidIfName(l.name)) {
      skipped.push_back(base::EscapeForDisplay(l.name) + " (a name erdma-cni cannot record)");
      continue;
    }
    std::optional<netlink::PairMatch> pair;
    if (!pool.rdma_driver.empty()) {
      pair = netlink::PairNetdev(l, rdma_devices, rdma_ports, ctx.sysfs_root);
      if (!pair || LinkBase(ctx.sysfs_root + "/class/infiniband/" + pair->device.name + "/device/driver") !=
                       pool.rdma_driver)
        continue;
    }
    if (alone) {
      if (auto owner = claims.Find(l.name, l.mac, PciAddressOf(ctx.sysfs_root, l.name))) {
        skipped.push_back(l.name + " (held by container " + owner->container_id + ")");
        continue;
      }
      if (auto s = RefuseNodeOwnDevice(ctx, l); !s.ok()) {
        skipped.push_back(l.name + " (the node's own)");
        continue;
      }
    }
    if (std::string why = WhyUnusable(l, pair ? &pair->port : nullptr, ctx.sysfs_root); !why.empty()) {
      skipped.push_back(l.name + " (" + why + ")");
      continue;
    }
    RailNic nic{l.name, std::nullopt, -1};
    if (!rail_gpus.empty()) {
      nic.location = NetdevLocation(ctx.sysfs_root, l.name);
      if (!nic.location) {
        const std::string numa = Attr(pci_function(), "numa_node");
        nic.numa = numa.empty() ? -1 : std::atoi(numa.c_str());
      }
    }
    nics.push_back(std::move(nic));
  }
  const RailRanking ranking = RankRails(rail_gpus, nics);
  if (ranking.basis == RankBasis::kFlat)
    base::Log::Info(
        "device.pool: flat PCI topology (every device on one root bus, no NUMA node): ranked by name");
  if (passed_over) *passed_over = Join(skipped);
  std::vector<DeviceCandidate> candidates;
  for (const RankedNic& n : ranking.nics)
    candidates.push_back({conf::DeviceSelector{By::kName, n.name, "device.pool (" + n.name + ")"},
                          RailWhy(n, ranking.basis, gpus != nullptr)});
  return candidates;
}

std::string MemberName(const std::string& base, size_t k) {
  size_t digits = base.size();
  while (digits > 0 && base[digits - 1] >= '0' && base[digits - 1] <= '9') --digits;
  const std::string name = digits == base.size() || base.size() - digits > 6
                               ? base + std::to_string(k)
                               : base.substr(0, digits) + std::to_string(std::stoul(base.substr(digits)) + k);
  return name.size() > 15 ? "" : name;
}

Result<DeviceChoice> ChooseDevices(Context& ctx, std::optional<kubelet::PodAllocation> answer) {
  const conf::DeviceSelector& sel = ctx.cfg.device;
  const bool pool = sel.pool.has_value();
  const auto who = PodOf(ctx.env);
  const std::string what = sel.by == By::kResource ? "device.resource \"" + sel.value + "\"" : "device.pool";
  const std::string socket =
      ctx.node_policy ? ctx.node_policy->pod_resources_socket : std::string(kubelet::kDefaultSocket);

  std::optional<kubelet::PodAllocation> alloc;
  if (sel.by == By::kResource) {
    if (!who)
      return Error(Code::kInvalidEnv,
                   what +
                       ": CNI_ARGS lacks K8S_POD_NAMESPACE and K8S_POD_NAME, which name the pod to ask the "
                       "kubelet about; runtimes under Kubernetes pass them, elsewhere select the device by "
                       "name, mac, pci, rdma or pool");
    if (!answer) {
      ASSIGN_OR_RETURN(
          answer, kubelet::PodDevices(socket, {who->first, who->second, sel.value}, kubelet::kTimeLimit));
    }
    alloc = std::move(answer);
  } else if (who) {
    auto a = kubelet::PodDevices(socket, {who->first, who->second, ""}, kubelet::kTimeLimit);
    if (a.ok())
      alloc = std::move(a).value();
    else
      base::Log::Info("device.pool: the pod's GPUs are not known, every free device ranks alike (" +
                      a.error().msg + ")");
  }
  const std::string pod = who ? who->first + "/" + who->second : "";

  // The devices the kubelet named, each once, in its order.
  std::vector<std::pair<std::string, std::string>> given;  // key, first ID
  std::vector<std::string> ids;
  if (alloc) {
    std::unordered_set<std::string> seen;
    for (const auto& d : alloc->devices) {
      ids.push_back(d.id);
      if (std::string key = DeviceKey(d.id); seen.insert(key).second)
        given.emplace_back(std::move(key), d.id);
    }
  }
  // "all" takes no more than a number may ask for.
  auto bounded = [&](size_t matched, const std::string& of) -> base::Status {
    if (!sel.all || matched <= conf::kMaxDevices) return base::Ok();
    return Error(Code::kInvalidConfig, "device.count: \"all\" matched " + std::to_string(matched) +
                                           " devices (" + of + "), more than the " +
                                           std::to_string(conf::kMaxDevices) +
                                           " one attachment may take; set device.count to a number up to " +
                                           std::to_string(conf::kMaxDevices) + ", or narrow " +
                                           (pool ? "device.pool" : "the request"));
  };

  DeviceChoice choice;
  if (!pool) {
    RETURN_IF_ERROR(bounded(given.size(), "the kubelet gave pod " + pod + " as many"));
    choice.want = sel.all ? given.size() : sel.count;
    if (given.size() < choice.want)
      return Error(Code::kDeviceNotFound,
                   what + ": the kubelet gave pod " + pod + " " + std::to_string(given.size()) + " device" +
                       (given.size() == 1 ? "" : "s") + " of it (" + Join(ids) +
                       "), and device.count asks for " + std::to_string(choice.want) +
                       "; ask for as many in the pod's resources.limits, or set device.count \"all\"");
    base::Log::Info(what + ": the kubelet (" + alloc->method + ") gave pod " + pod + " " + Join(ids));
    for (size_t i = 0; i < choice.want; ++i) {
      const std::string& id = given[i].second;
      conf::DeviceSelector s{By::kDeviceId, id, what + " (the kubelet gave pod " + pod + " " + id + ")"};
      choice.candidates.push_back({s, "the kubelet gave the pod " + id});
    }
    return choice;
  }

  std::string passed_over;
  ASSIGN_OR_RETURN(auto ranked, PoolCandidates(ctx, *sel.pool, alloc ? &*alloc : nullptr, &passed_over));
  choice.alternatives = true;
  // How many: the count, or with "all" as many as the kubelet gave the pod
  // of the resource (Terway's eni-<n>), or every free device of the pool.
  choice.want = !sel.all ? sel.count : sel.by == By::kResource ? given.size() : ranked.size();
  RETURN_IF_ERROR(bounded(choice.want, sel.by == By::kResource ? "the kubelet gave pod " + pod + " as many"
                                                               : "free devices of the pool"));
  std::vector<std::string> names;
  for (const DeviceCandidate& d : ranked) names.push_back(d.selector.value);
  if (choice.want == 0 || ranked.size() < choice.want)
    return Error(Code::kTryAgainLater,
                 "device.pool: " + std::to_string(ranked.size()) + " free device" +
                     (ranked.size() == 1 ? "" : "s") + " (" + (names.empty() ? "none" : Join(names)) +
                     ") for the " + std::to_string(std::max<size_t>(choice.want, 1)) +
                     " this attachment takes" + (passed_over.empty() ? "" : "; passed over: " + passed_over) +
                     "; retry when other pods have left, or widen the pool");
  std::vector<std::string> ranked_why;
  for (const DeviceCandidate& d : ranked) ranked_why.push_back(d.selector.value + " (" + d.why + ")");
  choice.candidates = std::move(ranked);
  base::Log::Info("device.pool: free, nearest the pod's GPUs first: " + Join(ranked_why) +
                  (passed_over.empty() ? "" : "; passed over: " + passed_over));
  return choice;
}

// A config, possibly a namespace user's, may not cut the node off its network; the node admin may
// (docs/security.md). Checked before anything changes, the claim included.
base::Status RefuseNodeOwnDevice(Context& ctx, const netlink::LinkInfo& dev) {
  // Unset only in unit tests on fake nodes (run.cpp always sets it).
  if (!ctx.node_policy) return base::Ok();
  const conf::NodePolicy& node = *ctx.node_policy;
  for (const std::string& allowed : node.allow_node_devices)
    if (allowed == dev.name) return base::Ok();
  std::string why;
  // The loopback device is the first one of every netns.
  if (dev.name == "lo" || dev.index == 1) {
    why = "is the node's loopback device";
  } else {
    // The node's default route per family is the one with the lowest metric in main; secondary ENIs often
    // carry defaults at higher metrics (the node agent's) and stay attachable.
    ASSIGN_OR_RETURN(auto routes, NodeMainRoutes(ctx));
    for (int family : {AF_INET, AF_INET6}) {
      std::optional<uint32_t> best;
      for (const netlink::RouteInfo& r : routes)
        if (r.family() == family && r.table == netlink::kTableMain && r.dst.len == 0 && r.type == 1)
          best = std::min(best.value_or(r.metric), r.metric);
      // Any leg of a multipath default counts: the node routes through each.
      const auto through_dev = [&dev](const netlink::RouteInfo& r) {
        return r.oif == dev.index ||
               std::any_of(r.nexthops.begin(), r.nexthops.end(),
                           [&dev](const netlink::Nexthop& h) { return h.oif == dev.index; });
      };
      for (const netlink::RouteInfo& r : routes)
        if (best && r.family() == family && r.table == netlink::kTableMain && r.dst.len == 0 && r.type == 1 &&
            r.metric == *best && through_dev(r) && why.empty())
          why =
              std::string("carries the node's ") + (family == AF_INET6 ? "IPv6" : "IPv4") + " default route";
    }
  }
  if (why.empty()) return base::Ok();
  return Error(Code::kInvalidConfig,
               ctx.cfg.device.Describe() + " selects " + dev.name + ", which " + why + "; mode " +
                   std::string(ctx.cfg.mode->name) +
                   " would take it from the node. Select another device, or, if the node can do without it, "
                   "the node admin adds \"" +
                   dev.name + "\" to allowNodeDevices in the node file (" +
                   (node.source.starts_with("/") ? node.source : std::string(conf::kNodeConfigPath)) +
                   ", docs/security.md)");
}

}  // namespace cni

#include "integration/bench/floor.h"

#include <time.h>

#include "cni/device/lookup.h"
#include "cni/driver/child.h"
#include "cni/driver/plan.h"
#include "cni/driver/rdma.h"
#include "cni/journal/journal.h"
#include "ipam/inherit.h"
#include "netlink/netns.h"
#include "netlink/rdma_socket.h"
#include "netlink/rtnl_socket.h"

namespace bench {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

namespace {

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Forwards every verb to the real kernel handle and records its wall time.
class TimedKernel final : public netlink::Kernel {
  template <typename F>
  auto Time(const char* verb, F&& f) -> decltype(f()) {
    const double t0 = Now();
    auto r = f();
    t_[verb].push_back(Now() - t0);
    return r;
  }

 public:
  TimedKernel(std::unique_ptr<netlink::Kernel> k, VerbTimes& t) : k_(std::move(k)), t_(t) {}
  int NetnsFd() const override { return k_->NetnsFd(); }
  Result<std::vector<netlink::LinkInfo>> ListLinks() override {
    return Time("ListLinks", [&] { return k_->ListLinks(); });
  }
  Result<std::optional<netlink::LinkInfo>> FindLink(std::string_view n) override {
    return Time("FindLink", [&] { return k_->FindLink(n); });
  }
  Result<std::optional<netlink::LinkInfo>> FindLinkByIndex(int i) override {
    return Time("FindLinkByIndex", [&] { return k_->FindLinkByIndex(i); });
  }
  using Kernel::MoveLink;
  Status MoveLink(const netlink::LinkInfo& l, const Kernel& target, std::string_view n) override {
    return Time("MoveLink", [&] { return k_->MoveLink(l, target, n); });
  }
  Status RenameLink(int i, std::string_view n) override {
    return Time("RenameLink", [&] { return k_->RenameLink(i, n); });
  }
  Status SetMtu(int i, uint32_t m) override {
    return Time("SetMtu", [&] { return k_->SetMtu(i, m); });
  }
  Status AddChildLink(const netlink::ChildLinkSpec& spec, const Kernel& target) override {
    return Time("AddChildLink", [&] { return k_->AddChildLink(spec, target); });
  }
  Status DeleteLink(int i) override {
    return Time("DeleteLink", [&] { return k_->DeleteLink(i); });
  }
  Status SetMac(int i, std::string_view m) override {
    return Time("SetMac", [&] { return k_->SetMac(i, m); });
  }
  Status SetUp(int i, bool up) override {
    return Time(up ? "SetUp(up)" : "SetUp(down)", [&] { return k_->SetUp(i, up); });
  }
  Result<std::vector<netlink::AddrInfo>> ListAddrs(int i) override {
    return Time("ListAddrs", [&] { return k_->ListAddrs(i); });
  }
  Status AddAddr(const netlink::AddrInfo& a) override {
    return Time("AddAddr", [&] { return k_->AddAddr(a); });
  }
  Status DelAddr(const netlink::AddrInfo& a) override {
    return Time("DelAddr", [&] { return k_->DelAddr(a); });
  }
  Result<std::vector<netlink::RouteInfo>> ListRoutes(int oif) override {
    return Time("ListRoutes", [&] { return k_->ListRoutes(oif); });
  }
  Status AddRoute(const netlink::RouteInfo& r) override {
    return Time("AddRoute", [&] { return k_->AddRoute(r); });
  }
  Status AppendRoute(const netlink::RouteInfo& r) override {
    return Time("AppendRoute", [&] { return k_->AppendRoute(r); });
  }
  Status DelRoute(const netlink::RouteInfo& r) override {
    return Time("DelRoute", [&] { return k_->DelRoute(r); });
  }
  Result<std::vector<netlink::RuleInfo>> ListRules() override {
    return Time("ListRules", [&] { return k_->ListRules(); });
  }
  Status AddRule(const netlink::RuleInfo& r) override {
    return Time("AddRule", [&] { return k_->AddRule(r); });
  }
  Status DelRule(const netlink::RuleInfo& r) override {
    return Time("DelRule", [&] { return k_->DelRule(r); });
  }

 private:
  std::unique_ptr<netlink::Kernel> k_;
  VerbTimes& t_;
};

Result<std::unique_ptr<netlink::Kernel>> Wrap(Result<std::unique_ptr<netlink::Kernel>> k, double t0,
                                              VerbTimes* t) {
  if (!k.ok() || !t) return k;
  (*t)["open (netns + socket)"].push_back(Now() - t0);
  return std::unique_ptr<netlink::Kernel>(std::make_unique<TimedKernel>(std::move(k).value(), *t));
}

Result<std::unique_ptr<netlink::Kernel>> OpenHost(VerbTimes* t) {
  const double t0 = Now();
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
  return Wrap(netlink::OpenRtnl(ns), t0, t);
}

Result<std::unique_ptr<netlink::Kernel>> OpenPod(const std::string& path, VerbTimes* t) {
  const double t0 = Now();
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Open(path, "CNI_NETNS"));
  return Wrap(netlink::OpenRtnl(ns), t0, t);
}

}  // namespace

Result<FloorAttachment> FloorAdd(const FloorSpec& spec) {
  const conf::Config& cfg = spec.cfg;
  ASSIGN_OR_RETURN(auto host, OpenHost(spec.times));

  // RDMA netlink is tried by ADD whether or not the kernel has it.
  Result<std::unique_ptr<netlink::Rdma>> host_rdma = Error(Code::kRdmaUnavailable, "not tried");
  {
    ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
    host_rdma = netlink::OpenRdma(ns);
  }
  netlink::Rdma* rdma = host_rdma.ok() ? host_rdma->get() : nullptr;

  // The device, then again by index as ADD does once it holds the claim
  // (a child's parent is not claimed).
  const cni::DeviceQuery query = cni::QueryFor(cfg.device);
  ASSIGN_OR_RETURN(auto device, cni::FindDevice(*host, rdma, query, "/sys"));
  if (!device) return Error(Code::kDeviceNotFound, query.Describe() + " is not on the node");
  if (!cfg.child()) {
    ASSIGN_OR_RETURN(auto locked, host->FindLinkByIndex(device->index));
    if (!locked) return Error(Code::kDeviceNotFound, query.Describe() + " vanished");
    device = locked;
  }

  // The pod: name clash check, table choice.
  ASSIGN_OR_RETURN(auto pod, OpenPod(spec.pod_netns, spec.times));
  ASSIGN_OR_RETURN(auto clash, pod->FindLink(spec.pod_if));
  if (clash) return Error(Code::kInvalidConfig, "the pod already has " + spec.pod_if);
  ASSIGN_OR_RETURN(auto pod_rules, pod->ListRules());
  ASSIGN_OR_RETURN(auto pod_routes, pod->ListRoutes(0));
  ASSIGN_OR_RETURN(uint32_t table, cni::ChooseTable(cfg.routing, pod_rules, pod_routes));

  // The origin DEL puts back (a child's parent stays on the node untouched).
  FloorAttachment att;
  cni::AttachmentState& st = att.st;
  st.network = cfg.name;
  st.pod_if_name = spec.pod_if;
  st.netns = spec.pod_netns;
  st.table = table;
  if (!cfg.child()) {
    st.origin.name = device->name;
    st.origin.index = device->index;
    st.origin.mac = device->mac;
    st.origin.mtu = device->mtu;
    st.origin.up = device->up;
    st.origin.kind = device->kind;
    ASSIGN_OR_RETURN(auto addrs, host->ListAddrs(device->index));
    ASSIGN_OR_RETURN(auto routes, host->ListRoutes(device->index));
    st.origin.addrs = cni::RestorableAddrs(addrs);
    st.origin.routes = cni::RestorableRoutes(routes);
  }
  ASSIGN_OR_RETURN(
      cni::RdmaPlan rdma_plan,
      cni::ResolveRdma(cfg.rdma, *device, rdma, host_rdma.ok() ? nullptr : &host_rdma.error(), "/sys", ""));
  (void)rdma_plan;  // no RDMA in the floor: the benchmark's kernel has none

  // Apply: the move or the child's creation, then the pod-side
  // configuration, step by step.
  cni::StepEnv env{.host = *host, .pod = pod.get()};
  const std::vector<ipam::IpConfig> ips =
      cfg.child() ? spec.ips : ipam::Inherit(st.origin.addrs, st.origin.routes);
  if (cfg.child()) {
    st.steps.push_back(cni::ChildStep(cfg, cfg.mac, *device, spec.pod_if));
  } else {
    if (spec.down_before_move) RETURN_IF_ERROR(host->SetUp(device->index, false));
    st.steps.push_back(cni::StepMove{spec.pod_if});
  }
  RETURN_IF_ERROR(cni::ApplyStep(st.steps.back(), st, env));
  for (auto& step : cni::PlanPodConfig(cfg, env.pod_index, table, ips)) {
    st.steps.push_back(std::move(step));
    RETURN_IF_ERROR(cni::ApplyStep(st.steps.back(), st, env));
  }
  // The result's MAC is the one the move's (or the creation's) lookup read:
  // no request, as in erdma-cni.
  st.complete = true;
  return att;
}

Status FloorDel(const FloorSpec& spec, const FloorAttachment& att) {
  ASSIGN_OR_RETURN(auto host, OpenHost(spec.times));
  ASSIGN_OR_RETURN(auto pod, OpenPod(spec.pod_netns, spec.times));
  if (spec.down_before_move) {
    ASSIGN_OR_RETURN(auto link, pod->FindLink(spec.pod_if));
    if (link) RETURN_IF_ERROR(pod->SetUp(link->index, false));
  }
  cni::StepEnv env{.host = *host, .pod = pod.get()};
  std::vector<Error> errors = cni::UndoSteps(att.st, env);
  if (!errors.empty()) return cni::JoinErrors(errors, "floor DEL");
  return base::Ok();
}

}  // namespace bench

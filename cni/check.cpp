// CHECK: the attachment is still what ADD made it.
#include <algorithm>

#include "cni/commands.h"
#include "cni/rdma.h"
#include "cni/smcr.h"
#include "cni/state.h"
#include "cni/vf.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

Error Mismatch(const std::string& what) { return Error(Code::kCheckFailed, "CHECK: " + what); }

bool SameRoute(const netlink::RouteInfo& want, const netlink::RouteInfo& got) {
  // Metric 0 asks for the kernel's default, which IPv6 turns into 1024.
  return want.dst.Network() == got.dst.Network() && want.table == got.table &&
         (want.metric == 0 || want.metric == got.metric) && want.gateway == got.gateway &&
         want.oif == got.oif;
}

bool SameRule(const netlink::RuleInfo& want, const netlink::RuleInfo& got) {
  return want.family == got.family && want.priority == got.priority && want.table == got.table &&
         want.src == got.src;
}

// Forwards CHECK to the IPAM plugin ADD ran.
Status CheckIpam(Context& ctx, const AttachmentState& st) {
  for (const auto& step : st.steps) {
    if (const auto* ipam = std::get_if<StepIpam>(&step)) {
      nlohmann::json config = ipam->config;
      if (ctx.cfg.chained()) config["prevResult"] = ctx.cfg.prev_result;
      auto r = ctx.ipam.Run(ipam->type, "CHECK", config.dump());
      if (!r.ok()) return std::move(r).error().WithContext("CHECK");
    }
  }
  return base::Ok();
}

}  // namespace

Status Check(Context& ctx) {
  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  const std::string path = store.PathFor(ctx.env.container_id, ctx.env.ifname);
  ASSIGN_OR_RETURN(auto loaded, store.Load(path));
  if (!loaded || !loaded->complete)
    return Error(Code::kUnknownContainer, "CHECK: no completed attachment for container " +
                                              ctx.env.container_id + " interface " + ctx.env.ifname +
                                              " in network " + ctx.cfg.name);
  const AttachmentState& st = *loaded;

  if (ctx.cfg.chained()) {
    const auto& ifs = ctx.cfg.prev_result.value("interfaces", nlohmann::json::array());
    bool listed = std::any_of(ifs.begin(), ifs.end(), [&](const nlohmann::json& i) {
      return i.is_object() && i.contains("name") && i["name"] == st.pod_if_name;
    });
    if (!listed) return Mismatch("prevResult does not list interface " + st.pod_if_name);
  }

  // An SR-IOV VF: the settings ADD gave it through the PF are still there.
  const StepVf* vf = nullptr;
  std::string mac = st.origin.mac;
  for (const auto& step : st.steps) {
    if (const auto* v = std::get_if<StepVf>(&step)) vf = v;
    if (const auto* m = std::get_if<StepMac>(&step)) mac = m->mac;
  }
  if (vf) {
    ASSIGN_OR_RETURN(auto vfs, ctx.netns.OpenVf());
    RETURN_IF_ERROR(CheckVf(*vf, *vfs));
    // Bound to vfio-pci: there is no interface in the pod to look at.
    if (vf->netdev.empty()) return CheckIpam(ctx, st);
  }

  ASSIGN_OR_RETURN(auto pod, ctx.netns.Open(ctx.env.netns));
  ASSIGN_OR_RETURN(auto link, pod->FindLink(st.pod_if_name));
  if (!link) return Mismatch("interface " + st.pod_if_name + " is missing from the pod");
  if (!mac.empty() && link->mac != mac)
    return Mismatch(st.pod_if_name + " has MAC " + link->mac + ", expected " + mac);
  for (const auto& step : st.steps) {
    const auto* c = std::get_if<StepChild>(&step);
    if (!c) continue;
    if (link->kind != c->spec.kind)
      return Mismatch(st.pod_if_name + " is " + (link->kind.empty() ? "a device" : "a " + link->kind) +
                      ", expected the " + c->spec.kind + " child of " + c->parent);
    if (!c->spec.mac.empty() && link->mac != c->spec.mac)
      return Mismatch(st.pod_if_name + " has MAC " + link->mac + ", expected " + c->spec.mac);
  }
  if (!link->up) return Mismatch(st.pod_if_name + " is down");
  if (ctx.cfg.mtu && link->mtu != *ctx.cfg.mtu)
    return Mismatch(st.pod_if_name + " has MTU " + std::to_string(link->mtu) + ", expected " +
                    std::to_string(*ctx.cfg.mtu));

  ASSIGN_OR_RETURN(auto addrs, pod->ListAddrs(link->index));
  ASSIGN_OR_RETURN(auto routes, pod->ListRoutes(0));
  ASSIGN_OR_RETURN(auto rules, pod->ListRules());
  for (const auto& step : st.steps) {
    if (const auto* a = std::get_if<StepAddr>(&step)) {
      bool found =
          std::any_of(addrs.begin(), addrs.end(), [&](const auto& g) { return g.local == a->addr.local; });
      if (!found)
        return Mismatch("address " + a->addr.local.ToString() + " is missing from " + st.pod_if_name);
    } else if (const auto* r = std::get_if<StepRoute>(&step)) {
      netlink::RouteInfo want = r->route;
      want.oif = link->index;
      bool found =
          std::any_of(routes.begin(), routes.end(), [&](const auto& g) { return SameRoute(want, g); });
      if (!found) return Mismatch("route missing: " + DescribeStep(step));
    } else if (const auto* ru = std::get_if<StepRule>(&step)) {
      bool found =
          std::any_of(rules.begin(), rules.end(), [&](const auto& g) { return SameRule(ru->rule, g); });
      if (!found) return Mismatch("rule missing: " + DescribeStep(step));
    }
  }
  if (!st.rdma_device.empty()) {
    // Exclusive: the pod must still hold its device. Shared: the node's
    // device must still exist (every netns sees it).
    const bool exclusive = st.rdma_mode == "exclusive";
    ASSIGN_OR_RETURN(auto rdma, ctx.netns.OpenRdma(exclusive ? ctx.env.netns : ""));
    ASSIGN_OR_RETURN(auto index, FindRdmaDevice(*rdma, st.rdma_device));
    if (!index)
      return Mismatch("RDMA device " + st.rdma_device + " is not " +
                      (exclusive ? "in the pod (exclusive mode)" : "on the node (shared mode)"));
  }
  const bool has_smcr = std::any_of(st.steps.begin(), st.steps.end(), [](const Step& s) {
    return std::holds_alternative<StepSysctl>(s) || std::holds_alternative<StepPnet>(s);
  });
  if (has_smcr) {
    ASSIGN_OR_RETURN(auto sysctl, ctx.netns.OpenSysctl(ctx.env.netns));
    auto smc = ctx.netns.OpenSmc(ctx.env.netns);
    RETURN_IF_ERROR(CheckSmcr(st, *sysctl, smc.ok() ? smc->get() : nullptr));
  }
  return CheckIpam(ctx, st);
}

}  // namespace cni

// CHECK: the attachment is still what ADD made it.
#include <algorithm>
#include <optional>

#include "cni/commands.h"
#include "cni/rdma.h"
#include "cni/smcr.h"
#include "cni/state.h"
#include "cni/vf.h"
#include "conf/names.h"

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

// The final result's entry for our pod-side interface, or null. A plugin
// after us in the chain (e.g. tuning) may change the interface's MAC or MTU
// and says so there; CHECK holds the interface to the result it gets.
const nlohmann::json* ResultInterface(const nlohmann::json& prev_result, const std::string& name) {
  if (!prev_result.is_object()) return nullptr;
  auto ifs = prev_result.find("interfaces");
  if (ifs == prev_result.end() || !ifs->is_array()) return nullptr;
  for (const auto& i : *ifs) {
    if (!i.is_object()) continue;
    auto n = i.find("name"), sandbox = i.find("sandbox");
    if (n != i.end() && n->is_string() && *n == name && sandbox != i.end() && sandbox->is_string() &&
        !sandbox->get_ref<const std::string&>().empty())
      return &i;
  }
  return nullptr;
}

}  // namespace

Status Check(Context& ctx) {
  StateStore store(ctx.cfg.data_dir, ctx.cfg.name);
  RETURN_IF_ERROR(store.Check());
  const std::string path = store.Locate(ctx.env.container_id, ctx.env.ifname);
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

  // The MAC and MTU we set (a VF may have been given the runtime's MAC),
  // unless a later plugin's result says otherwise.
  std::string want_mac = st.origin.mac;
  std::optional<uint32_t> want_mtu = ctx.cfg.mtu;
  // An SR-IOV VF: the settings ADD gave it through the PF are still there.
  const StepVf* vf = nullptr;
  for (const auto& step : st.steps) {
    if (const auto* v = std::get_if<StepVf>(&step)) vf = v;
    if (const auto* m = std::get_if<StepMac>(&step)) want_mac = m->mac;
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
  for (const auto& step : st.steps) {
    const auto* c = std::get_if<StepChild>(&step);
    if (!c) continue;
    if (link->kind != c->spec.kind)
      return Mismatch(st.pod_if_name + " is " + (link->kind.empty() ? "a device" : "a " + link->kind) +
                      ", expected the " + c->spec.kind + " child of " + c->parent);
    want_mac = c->spec.mac;
  }
  if (const nlohmann::json* r = ResultInterface(ctx.cfg.prev_result, st.pod_if_name)) {
    if (auto m = r->find("mac"); m != r->end() && m->is_string() && !m->get<std::string>().empty())
      want_mac = conf::NormalizeMac(m->get<std::string>()).value_or(m->get<std::string>());
    if (auto m = r->find("mtu"); m != r->end() && m->is_number_unsigned() && m->get<uint64_t>() > 0)
      want_mtu = static_cast<uint32_t>(m->get<uint64_t>());
  }
  if (!want_mac.empty() && link->mac != want_mac)
    return Mismatch(st.pod_if_name + " has MAC " + link->mac + ", expected " + want_mac);
  if (!link->up) return Mismatch(st.pod_if_name + " is down");
  if (want_mtu && link->mtu != *want_mtu)
    return Mismatch(st.pod_if_name + " has MTU " + std::to_string(link->mtu) + ", expected " +
                    std::to_string(*want_mtu));

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

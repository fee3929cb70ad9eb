// CHECK: the attachment is still what ADD made it.
#include "cni/command/check.h"

#include <algorithm>
#include <optional>

#include "base/log.h"
#include "cni/command/group.h"
#include "cni/command/pod_request.h"
#include "cni/core/context.h"
#include "cni/driver/driver.h"
#include "cni/driver/rdma.h"
#include "cni/journal/rdma_device.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

// The final result's entry for our interface, or null: a later plugin may change its MAC or MTU.
const nlohmann::json* PrevResultInterface(const nlohmann::json& prev_result, const std::string& name) {
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
  if (!ctx.member_of) {
    ASSIGN_OR_RETURN(auto group, store.Load(store.GroupPathFor(ctx.env.container_id, ctx.env.ifname)));
    if (group) return CheckGroup(ctx, *group);
  }
  std::string path;
  ASSIGN_OR_RETURN(auto loaded, store.LoadLocated(ctx.env.container_id, ctx.env.ifname, &path));
  // No state: a pod that asked for nothing passed through its ADD (asked only where nothing of ours exists).
  if (!loaded && !ctx.member_of) {
    ASSIGN_OR_RETURN(PodRequest request, WhatThePodAsked(ctx.cfg, ctx.env, ctx.node_policy));
    if (!request.asked) {
      base::Log::Info("CHECK passed through: " + request.why);
      return base::Ok();
    }
  }
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

  // The MAC and MTU we set, unless a later plugin's result says otherwise.
  std::string want_mac = st.origin.mac;
  if (const auto* m = FindStep<StepMac>(st.steps)) want_mac = m->mac;
  if (const auto* c = FindStep<StepChild>(st.steps)) want_mac = c->spec.mac;
  std::optional<uint32_t> want_mtu = ctx.cfg.mtu;
  CheckEnv env{.ctx = ctx, .state = st};
  auto check_steps = [&]() -> Status {
    for (const Step& step : st.steps) RETURN_IF_ERROR(CheckStep(step, env));
    return base::Ok();
  };
  if (!ctx.cfg.mode->driver().HasPodLink(st)) return check_steps();

  ASSIGN_OR_RETURN(auto pod, ctx.netns.Open(ctx.env.netns));
  ASSIGN_OR_RETURN(auto link, pod->FindLink(st.pod_if_name));
  if (!link) return Mismatch("interface " + st.pod_if_name + " is missing from the pod");
  env.link = *link;
  ASSIGN_OR_RETURN(env.addrs, pod->ListAddrs(link->index));
  ASSIGN_OR_RETURN(env.routes, pod->ListRoutes(0));
  ASSIGN_OR_RETURN(env.rules, pod->ListRules());
  // What each step made is still there (the IPAM plugin is asked too).
  RETURN_IF_ERROR(check_steps());
  if (const nlohmann::json* r = PrevResultInterface(ctx.cfg.prev_result, st.pod_if_name)) {
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
  if (!st.rdma_device.empty()) {
    // Exclusive: the pod still holds its device; shared: the node's still exists.
    const bool exclusive = st.rdma_mode == "exclusive";
    ASSIGN_OR_RETURN(auto rdma, ctx.netns.OpenRdma(exclusive ? ctx.env.netns : ""));
    ASSIGN_OR_RETURN(auto index, FindRdmaDevice(*rdma, st.rdma_device));
    if (!index)
      return Mismatch("RDMA device " + st.rdma_device + " is not " +
                      (exclusive ? "in the pod (exclusive mode)" : "on the node (shared mode)"));
  }
  return base::Ok();
}

}  // namespace cni

#include "integration/bench/floor.h"

#include "cni/device.h"
#include "cni/journal.h"
#include "cni/plan.h"
#include "cni/rdma.h"
#include "ipam/inherit.h"
#include "netlink/netns.h"
#include "netlink/rdma_socket.h"
#include "netlink/rtnl_kernel.h"

namespace bench {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

namespace {

Result<std::unique_ptr<netlink::Kernel>> OpenHost() {
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
  return netlink::OpenRtnl(ns);
}

Result<std::unique_ptr<netlink::Kernel>> OpenPod(const std::string& path) {
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Open(path, "CNI_NETNS"));
  return netlink::OpenRtnl(ns);
}

}  // namespace

Result<FloorAttachment> FloorAdd(const FloorSpec& spec) {
  const conf::Config& cfg = spec.cfg;
  ASSIGN_OR_RETURN(auto host, OpenHost());

  // RDMA netlink is tried by ADD whether or not the kernel has it.
  Result<std::unique_ptr<netlink::Rdma>> host_rdma = Error(Code::kRdmaUnavailable, "not tried");
  {
    ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
    host_rdma = netlink::OpenRdma(ns);
  }
  netlink::Rdma* rdma = host_rdma.ok() ? host_rdma->get() : nullptr;

  // The device, then again by index as ADD does once it holds the claim.
  const cni::DeviceQuery query = cni::QueryFor(cfg.device);
  ASSIGN_OR_RETURN(auto device, cni::FindDevice(*host, rdma, query, "/sys"));
  if (!device) return Error(Code::kDeviceNotFound, query.Describe() + " is not on the node");
  ASSIGN_OR_RETURN(auto locked, host->FindLinkByIndex(device->index));
  if (!locked) return Error(Code::kDeviceNotFound, query.Describe() + " vanished");
  device = locked;

  // The pod: name clash check, table choice.
  ASSIGN_OR_RETURN(auto pod, OpenPod(spec.pod_netns));
  ASSIGN_OR_RETURN(auto clash, pod->FindLink(spec.pod_if));
  if (clash) return Error(Code::kInvalidConfig, "the pod already has " + spec.pod_if);
  ASSIGN_OR_RETURN(auto pod_rules, pod->ListRules());
  ASSIGN_OR_RETURN(auto pod_routes, pod->ListRoutes(0));
  ASSIGN_OR_RETURN(uint32_t table, cni::ChooseTable(cfg.routing, pod_rules, pod_routes));

  // The origin DEL puts back.
  FloorAttachment att;
  cni::AttachmentState& st = att.st;
  st.network = cfg.name;
  st.pod_if_name = spec.pod_if;
  st.netns = spec.pod_netns;
  st.table = table;
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
  ASSIGN_OR_RETURN(cni::RdmaPlan rdma_plan,
                   cni::PrepareRdma(cfg.rdma, *device, rdma, host_rdma.ok() ? nullptr : &host_rdma.error(),
                                    "/sys", ""));
  (void)rdma_plan;  // no RDMA in the floor: the benchmark's kernel has none

  // Apply: the move, then the pod-side configuration, step by step.
  cni::StepEnv env{.host = *host, .pod = pod.get()};
  const std::vector<ipam::IpConfig> ips = ipam::Inherit(st.origin.addrs, st.origin.routes);
  st.steps.push_back(cni::StepMove{spec.pod_if});
  RETURN_IF_ERROR(cni::ApplyStep(st.steps.back(), st, env));
  for (auto& step : cni::PlanPodConfig(cfg, env.pod_index, table, ips)) {
    st.steps.push_back(std::move(step));
    RETURN_IF_ERROR(cni::ApplyStep(st.steps.back(), st, env));
  }
  ASSIGN_OR_RETURN(auto link, pod->FindLinkByIndex(env.pod_index));
  if (!link) return Error(Code::kKernel, spec.pod_if + " vanished from the pod");
  st.complete = true;
  return att;
}

Status FloorDel(const FloorSpec& spec, const FloorAttachment& att) {
  ASSIGN_OR_RETURN(auto host, OpenHost());
  ASSIGN_OR_RETURN(auto pod, OpenPod(spec.pod_netns));
  cni::StepEnv env{.host = *host, .pod = pod.get()};
  std::vector<Error> errors = cni::UndoSteps(att.st, env);
  if (!errors.empty()) return cni::JoinErrors(errors, "floor DEL");
  return base::Ok();
}

}  // namespace bench

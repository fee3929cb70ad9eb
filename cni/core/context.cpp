#include "cni/core/context.h"

namespace cni {

base::Result<netlink::Kernel*> OpenNetns(Context& ctx, const std::string& path,
                                         std::unique_ptr<netlink::Kernel>& owned) {
  if (ctx.shared) {
    if (auto it = ctx.shared->netns.find(path); it != ctx.shared->netns.end()) return it->second.get();
  }
  ASSIGN_OR_RETURN(auto opened, ctx.netns.Open(path));
  netlink::Kernel* k = opened.get();
  if (ctx.shared)
    ctx.shared->netns.emplace(path, std::move(opened));
  else
    owned = std::move(opened);
  return k;
}

base::Result<netlink::Rdma*> NodeRdma(Context& ctx, std::unique_ptr<netlink::Rdma>& owned) {
  if (!ctx.shared) {
    ASSIGN_OR_RETURN(owned, ctx.netns.OpenRdma(""));
    return owned.get();
  }
  if (!ctx.shared->host_rdma) ctx.shared->host_rdma.emplace(ctx.netns.OpenRdma(""));
  if (!ctx.shared->host_rdma->ok()) return ctx.shared->host_rdma->error();
  return ctx.shared->host_rdma->value().get();
}

base::Result<std::vector<netlink::RouteInfo>> NodeMainRoutes(Context& ctx) {
  if (ctx.shared && ctx.shared->node_main_routes) return *ctx.shared->node_main_routes;
  ASSIGN_OR_RETURN(auto routes, ctx.host.ListTableRoutes(netlink::kTableMain));
  if (ctx.shared) ctx.shared->node_main_routes = routes;
  return routes;
}

}  // namespace cni

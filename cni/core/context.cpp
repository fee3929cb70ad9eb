#include "cni/core/context.h"

namespace cni {

Context ForAttachment(const Context& ctx, const conf::Config& cfg, const Env& env) {
  return Context{.cfg = cfg,
                 .env = env,
                 .host = ctx.host,
                 .netns = ctx.netns,
                 .ipam = ctx.ipam,
                 .sysfs_root = ctx.sysfs_root,
                 .procfs_root = ctx.procfs_root,
                 .lock_wait_ms = ctx.lock_wait_ms,
                 .node_policy = ctx.node_policy,
                 .cache = ctx.cache,
                 .recover_stale_claim = ctx.recover_stale_claim,
                 .requests = ctx.requests};
}

base::Result<netlink::Kernel*> OpenNetns(Context& ctx, const std::string& path,
                                         std::unique_ptr<netlink::Kernel>& owned) {
  if (ctx.cache) {
    if (auto it = ctx.cache->netns.find(path); it != ctx.cache->netns.end()) return it->second.get();
  }
  ASSIGN_OR_RETURN(auto opened, ctx.netns.Open(path));
  netlink::Kernel* k = opened.get();
  if (ctx.cache)
    ctx.cache->netns.emplace(path, std::move(opened));
  else
    owned = std::move(opened);
  return k;
}

base::Result<netlink::Rdma*> NodeRdma(Context& ctx, std::unique_ptr<netlink::Rdma>& owned) {
  if (!ctx.cache) {
    ASSIGN_OR_RETURN(owned, ctx.netns.OpenRdma(""));
    return owned.get();
  }
  if (!ctx.cache->host_rdma) ctx.cache->host_rdma.emplace(ctx.netns.OpenRdma(""));
  if (!ctx.cache->host_rdma->ok()) return ctx.cache->host_rdma->error();
  return ctx.cache->host_rdma->value().get();
}

base::Result<std::vector<netlink::RouteInfo>> NodeMainRoutes(Context& ctx) {
  if (ctx.cache && ctx.cache->node_main_routes) return *ctx.cache->node_main_routes;
  ASSIGN_OR_RETURN(auto routes, ctx.host.ListTableRoutes(netlink::kTableMain));
  if (ctx.cache) ctx.cache->node_main_routes = routes;
  return routes;
}

}  // namespace cni

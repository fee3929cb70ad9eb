// ADD's first step: the device (or VF) the config selects, found on the node
// and, unless it is a child's parent, claimed for this attachment.
#include <sys/socket.h>

#include <algorithm>
#include <optional>

#include "base/log.h"
#include "cni/add_common.h"
#include "cni/claim.h"
#include "cni/device.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;

namespace {

// Taking `lo` or the device that carries the node's default route away from
// the node cuts the node (kubelet, the runtime, this plugin's next DEL) off
// its network: a config, possibly a namespace user's, may not do it; the
// node admin may, by naming the device in the node file. Checked before
// anything changes, the claim included.
base::Status RefuseNodeOwnDevice(Context& ctx, const netlink::LinkInfo& dev) {
  // run.cpp always sets the node policy; unit tests on fake nodes whose one
  // device carries the only default route leave it out.
  if (!ctx.node) return base::Ok();
  const conf::NodePolicy& node = *ctx.node;
  for (const std::string& allowed : node.allow_node_devices)
    if (allowed == dev.name) return base::Ok();
  std::string why;
  // The loopback device is the first one of every netns.
  if (dev.name == "lo" || dev.index == 1) {
    why = "is the node's loopback device";
  } else {
    // The node's default route per family is the one with the lowest metric
    // in main; secondary ENIs often carry defaults at higher metrics (the
    // node agent's) and stay attachable.
    ASSIGN_OR_RETURN(auto routes, ctx.host.ListRoutes(0));
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
                   conf::ModeName(ctx.cfg.mode) +
                   " would take it from the node. Select another device, or, if the node can do without it, "
                   "the node admin adds \"" +
                   dev.name + "\" to allowNodeDevices in the node file (" +
                   (node.source.starts_with("/") ? node.source : std::string(conf::kNodeConfigPath)) +
                   ", docs/security.md)");
}

}  // namespace

Result<AddTarget> FindAddTarget(Context& ctx, const StateStore& store, const std::string& path,
                                netlink::Rdma* rdma, const Error* rdma_error) {
  const conf::Config& cfg = ctx.cfg;
  const DeviceQuery query = QueryFor(cfg.device);
  AddTarget t;
  std::optional<netlink::LinkInfo> device;
  // Mode vf: the VF, its PF and what the PF says about it; a VF without a
  // netdev (vfio-pci) gets its settings and nothing moves.
  if (cfg.mode == conf::Mode::kVf) {
    ASSIGN_OR_RETURN(t.vfs, ctx.netns.OpenVf());
    ASSIGN_OR_RETURN(t.vf, FindVfTarget(ctx, rdma, query, *t.vfs));
    if (t.vf && !t.vf->netdev && t.vf->sriov.netdev.empty() && t.vf->sriov.userspace()) {
      ASSIGN_OR_RETURN(t.done, AddUserspaceVf(ctx, store, path, *t.vf, *t.vfs));
      return t;
    }
    if (t.vf) device = t.vf->netdev;
  } else {
    ASSIGN_OR_RETURN(device, FindDevice(ctx.host, rdma, query, ctx.sysfs_root));
  }
  if (!device) {
    if (auto owner = FindClaim(store.DevicesDir(), query.name, query.mac, query.pci))
      return InUseError(query.Describe(), *owner);
    if (t.vf && t.vf->sriov.netdev.empty()) return VfWithoutNetdev(ctx, *t.vf);
    if (!query.rdma.empty() && !rdma)
      return Error(Code::kRdmaUnavailable, cfg.device.Describe() +
                                               " names an RDMA device but the node's kernel " +
                                               "has no RDMA netlink: " + (rdma_error ? rdma_error->msg : ""));
    return Error(Code::kDeviceNotFound, query.Describe() + " is not on the node; fix " +
                                            cfg.device.Describe() + " or check `ip link` on the node");
  }
  t.device = *device;
  if (cfg.child()) return t;
  RETURN_IF_ERROR(RefuseNodeOwnDevice(ctx, t.device));

  // A moved device is one pod's alone: claim it, unless children of other
  // pods hang from it (their shares). Children share their parent and claim
  // nothing; each records a share of it (add.cpp).
  std::optional<DeviceClaim> claim;
  ASSIGN_OR_RETURN(claim, DeviceClaim::Lock(store.DevicesDir(), t.device.name, ctx.lock_wait_ms));
  const std::optional<ClaimOwner> prior_owner = claim->Owner();
  if (prior_owner && ClaimIsLive(*prior_owner)) return InUseError(query.Describe(), *prior_owner);
  NewClaimGuard unowned(claim, !prior_owner);
  auto sharers = LiveShares(store.ChildrenDir(), t.device.name);
  if (!sharers.empty()) return SharedError(query.Describe(), t.device.name, sharers);
  // Another ADD may have taken it between our lookup and the lock.
  ASSIGN_OR_RETURN(auto locked, ctx.host.FindLinkByIndex(t.device.index));
  if (!locked || locked->name != t.device.name)
    return Error(Code::kTryAgainLater, query.Describe() + " was taken by another pod while we waited for it");
  t.device = *locked;
  unowned.Disarm();
  t.claim = std::move(claim);
  t.new_claim = !prior_owner;
  return t;
}

}  // namespace cni

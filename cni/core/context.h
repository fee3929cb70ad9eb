// What every CNI command runs against, independent of how the kernel is reached: run.cpp wires it to
// rtnetlink and exec'd IPAM plugins, unit tests to fakes.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/env.h"
#include "conf/config.h"
#include "conf/node.h"
#include "ipam/ipam.h"
#include "netlink/netns_liveness.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/smc_kernel.h"
#include "netlink/sysctl.h"
#include "netlink/vf_kernel.h"

namespace cni {

/// Opens the kernel interfaces of a pod's netns path. Errors: kInvalidEnv, with
/// sys_errno ENOENT when the path does not exist (DEL then treats the netns as
/// gone); also for the node's own netns, whose objects no command takes for a pod's.
class NetnsOpener {
 public:
  virtual ~NetnsOpener() = default;
  virtual base::Result<std::unique_ptr<netlink::Kernel>> Open(const std::string& path) = 0;
  /// RDMA netlink in the netns at `path`; "" is the node's own netns. Fails
  /// with sys_errno EPROTONOSUPPORT when the kernel has no RDMA.
  virtual base::Result<std::unique_ptr<netlink::Rdma>> OpenRdma(const std::string& path) = 0;
  /// The sysctls of the netns at `path`.
  virtual base::Result<std::unique_ptr<netlink::Sysctl>> OpenSysctl(const std::string& path) = 0;
  /// SMC generic netlink in the netns at `path` ("" = the node's). Fails with
  /// sys_errno ENOENT when the kernel has no SMC.
  virtual base::Result<std::unique_ptr<netlink::Smc>> OpenSmc(const std::string& path) = 0;
  /// SR-IOV VF settings through the PFs of the node's own netns.
  virtual base::Result<std::unique_ptr<netlink::Vf>> OpenVf() = 0;
  /// The identity of the netns `pod` (a handle Open gave) speaks to; nullopt when it cannot be told.
  virtual std::optional<netlink::NetnsId> Identify(const netlink::Kernel& pod) = 0;
  /// Whether the netns an attachment recorded at ADD (its path, and its identity
  /// when the state has one) may still exist; false only when it is provably gone
  /// (netlink::NetnsMayExist). `kept_by` receives what keeps it, for the log.
  virtual bool MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                        std::string* kept_by) = 0;
};

/// What one invocation opens or reads once for every device it attaches or detaches: a group's members
/// share their group's (run.cpp makes one per invocation; contexts without one, as in unit tests, open and
/// read for each device).
struct InvocationCache {
  /// Netns handles by path (CNI_NETNS; the netns a state recorded). A handle keeps no cache of the kernel's
  /// objects: every request reads the kernel as it is.
  std::map<std::string, std::unique_ptr<netlink::Kernel>> netns;
  /// The node's RDMA netlink, or why it cannot be opened.
  std::optional<base::Result<std::unique_ptr<netlink::Rdma>>> host_rdma;
  /// The node's main table, read once: which devices carry the node's default routes does not change with
  /// the devices an invocation attaches (it refuses those).
  std::optional<std::vector<netlink::RouteInfo>> node_main_routes;
};

class StateStore;
struct ClaimOwner;
struct Context;

/// Finishes the DEL of a provably dead holder of a device claim an ADD finds in its way; true when the
/// claim no longer blocks (cni/command/stale.h, RecoverClaim).
using RecoverStaleClaim = base::Result<bool> (*)(Context& ctx, const StateStore& store,
                                                 const ClaimOwner& owner);

struct Context {
  const conf::Config& cfg;
  const Env& env;
  netlink::Kernel& host;
  NetnsOpener& netns;
  ipam::Executor& ipam;
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  int lock_wait_ms = 10000;  ///< the binary sets cfg.lock_timeout_ms (`lockTimeoutMs`)
  /// The node file's policy (run.cpp always sets it); null: not checked (unit tests).
  const conf::NodePolicy* node_policy = nullptr;
  /// A member of a group (cni/command/group.h): the group's ifName, recorded in the member's state as
  /// memberOf.
  std::optional<std::string> member_of = std::nullopt;
  /// Set by Add: the PCI address and RDMA device of what it attached ("" none); a group's device-info file
  /// names its first member's.
  std::string attached_pci = std::string();
  std::string attached_rdma = std::string();
  /// What the invocation opened or read once; null: each device opens and reads its own.
  InvocationCache* cache = nullptr;
  /// Set by Add (the commands own DEL): a driver finding a claim in its way calls it. Null: no holder is
  /// recovered, the claim blocks (a driver called on its own).
  RecoverStaleClaim recover_stale_claim = nullptr;
  /// ADD: what the pod asked for beyond the config (CNI_ARGS, runtimeConfig.ips); null: nothing (the other
  /// commands, unit tests), the config's MAC stands.
  const conf::PodRequests* requests = nullptr;
};

/// `ctx` for another attachment of the same invocation (a device chosen from the config's pool or resource, a
/// group's member): what the invocation opened, read and was asked (the pod's requests) copied; what belongs
/// to one attachment (member_of, attached_*) left at its defaults.
Context ForAttachment(const Context& ctx, const conf::Config& cfg, const Env& env);

/// The MAC the pod's interface gets: the pod's request, else the config's (nullopt: the device's own).
inline const std::optional<std::string>& PodMac(const Context& ctx) {
  return ctx.requests ? ctx.requests->mac : ctx.cfg.mac;
}

/// The handle `opened` holds; null when it could not be opened (a netns that is gone, a kernel without SMC).
template <class T>
std::unique_ptr<T> OrNull(base::Result<std::unique_ptr<T>> opened) {
  return opened.ok() ? std::move(opened).value() : nullptr;
}

/// The handle of the netns at `path`: the invocation's cached one (opened on first use), else one opened
/// into `owned`. Errors as NetnsOpener::Open's.
base::Result<netlink::Kernel*> OpenNetns(Context& ctx, const std::string& path,
                                         std::unique_ptr<netlink::Kernel>& owned);

/// The node's RDMA netlink, opened once per invocation when cached (`owned` holds it otherwise); the error
/// says why there is none.
base::Result<netlink::Rdma*> NodeRdma(Context& ctx, std::unique_ptr<netlink::Rdma>& owned);

/// The routes of the node's main table (read once per invocation when cached).
base::Result<std::vector<netlink::RouteInfo>> NodeMainRoutes(Context& ctx);

/// Our interface's name in the pod: ifName when chained (CNI_IFNAME is the primary's), else CNI_IFNAME.
inline std::string PodIfName(const Context& ctx) {
  return ctx.cfg.chained() ? ctx.cfg.if_name : ctx.env.ifname;
}

}  // namespace cni

// What every CNI command runs against: run.cpp wires it to rtnetlink and IPAM plugins, unit tests to fakes.
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

/// Opens the kernel interfaces of a pod's netns path. Errors: kInvalidEnv, with sys_errno ENOENT when the
/// path does not exist (DEL: the netns is gone); also for the node's own netns.
class NetnsOpener {
 public:
  virtual ~NetnsOpener() = default;
  virtual base::Result<std::unique_ptr<netlink::Kernel>> Open(const std::string& path) = 0;
  /// RDMA netlink in the netns at `path` ("" = the node's); sys_errno EPROTONOSUPPORT without RDMA.
  virtual base::Result<std::unique_ptr<netlink::Rdma>> OpenRdma(const std::string& path) = 0;
  /// The sysctls of the netns at `path`.
  virtual base::Result<std::unique_ptr<netlink::Sysctl>> OpenSysctl(const std::string& path) = 0;
  /// SMC generic netlink in the netns at `path` ("" = the node's); sys_errno ENOENT without SMC.
  virtual base::Result<std::unique_ptr<netlink::Smc>> OpenSmc(const std::string& path) = 0;
  /// SR-IOV VF settings through the PFs of the node's own netns.
  virtual base::Result<std::unique_ptr<netlink::Vf>> OpenVf() = 0;
  /// The identity of the netns `pod` (a handle Open gave) speaks to; nullopt when it cannot be told.
  virtual std::optional<netlink::NetnsId> Identify(const netlink::Kernel& pod) = 0;
  /// Whether the netns an attachment recorded at ADD (path, and identity if any) may still exist; false only
  /// when it is provably gone (netlink::NetnsMayExist). `kept_by` receives what keeps it, for the log.
  virtual bool MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                        std::string* kept_by) = 0;
};

/// What one invocation opens or reads once for every device it attaches or detaches (a group's members share
/// their group's); without one, each device opens and reads its own.
struct InvocationCache {
  /// Netns handles by path; a handle caches none of the kernel's objects.
  std::map<std::string, std::unique_ptr<netlink::Kernel>> netns;
  /// The node's RDMA netlink, or why it cannot be opened.
  std::optional<base::Result<std::unique_ptr<netlink::Rdma>>> host_rdma;
  /// The node's main table, read once (an invocation never attaches a device of a default route).
  std::optional<std::vector<netlink::RouteInfo>> node_main_routes;
};

class StateStore;
struct ClaimOwner;
struct Context;

/// Finishes the DEL of a dead holder of a claim in an ADD's way; true when it no longer blocks.
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
  /// A group's member (cni/command/group.h): the group's ifName, its state's memberOf.
  std::optional<std::string> member_of = std::nullopt;
  /// Set by Add: the PCI address and RDMA device it attached ("" none), for a group's device-info file.
  std::string attached_pci = std::string();
  std::string attached_rdma = std::string();
  /// What the invocation opened or read once; null: each device opens and reads its own.
  InvocationCache* cache = nullptr;
  /// Set by Add: a driver finding a claim in its way calls it. Null: the claim blocks.
  RecoverStaleClaim recover_stale_claim = nullptr;
  /// ADD: what the pod asked for beyond the config (CNI_ARGS, runtimeConfig.ips); null: nothing.
  const conf::PodRequests* requests = nullptr;
};

/// `ctx` for another attachment of the same invocation: what it opened, read and was asked copied; what
/// belongs to one attachment (member_of, attached_*) left at its defaults.
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

/// The netns at `path`: the invocation's cached handle, else one opened into `owned`; errors as Open's.
base::Result<netlink::Kernel*> OpenNetns(Context& ctx, const std::string& path,
                                         std::unique_ptr<netlink::Kernel>& owned);

/// The node's RDMA netlink, once per invocation when cached (else in `owned`); or why there is none.
base::Result<netlink::Rdma*> NodeRdma(Context& ctx, std::unique_ptr<netlink::Rdma>& owned);

/// The routes of the node's main table (read once per invocation when cached).
base::Result<std::vector<netlink::RouteInfo>> NodeMainRoutes(Context& ctx);

/// Our interface's name in the pod: ifName when chained (CNI_IFNAME is the primary's), else CNI_IFNAME.
inline std::string PodIfName(const Context& ctx) {
  return ctx.cfg.chained() ? ctx.cfg.if_name : ctx.env.ifname;
}

}  // namespace cni

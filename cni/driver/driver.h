// A driver per mode: what differs between moving a device (move), making a macvlan/ipvlan child of it
// (child), handing over an SR-IOV VF (vf) and SMC-R on the primary's interface only (none). The ADD pipeline
// (add.cpp) is the same for every mode: Find -> hold (claim or share, add.cpp only) -> Resolve -> MakePlan
// (pure) -> journal and apply, rolling back on failure -> result. Drivers are found through
// cni/driver/registry.h.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/device/lookup.h"
#include "cni/driver/plan.h"
#include "cni/driver/rdma.h"
#include "cni/driver/smcr.h"
#include "cni/driver/vf_settings.h"
#include "cni/journal/journal.h"
#include "cni/state/state.h"
#include "ipam/ipam.h"

namespace cni {

class StateStore;

/// The node's RDMA netlink: null when the kernel has none, `error` saying why.
struct RdmaAccess {
  netlink::Rdma* host = nullptr;
  const base::Error* error = nullptr;
};

/// How an attachment holds its node device: the one word for it is a hold, a claim or a share
/// (cni/state/claim.h). ADD takes it through HoldGuard (add.cpp); ListHolds lists them.
enum class Hold {
  kNone,   ///< nothing is taken from the node (mode none)
  kClaim,  ///< a claim: the device is this attachment's alone (move, vf)
  kShare,  ///< a share of the parent, which children of many pods hold (child)
};

/// What a driver found on the node, and then read about it. Nothing changed.
struct Target {
  Hold hold = Hold::kNone;
  /// On the node: the device to move, the VF's netdev, or the child's parent.
  std::optional<netlink::LinkInfo> device;
  /// What the claim or share is named by: the device's name, or a user-space VF's PCI address.
  std::string hold_name;
  std::string selection;  ///< how errors name what the config selected: `device.name "eth1"`
  /// Whether a link enters the pod under the pod-side name (not for mode none or a user-space VF).
  bool enters_pod = true;
  std::unique_ptr<netlink::Vf> vfs;  ///< mode vf: the node's VF handle
  std::optional<VfTarget> vf;        ///< mode vf: the VF, its PF and what the PF says
  // Resolve's reads:
  std::vector<netlink::AddrInfo> addrs;  ///< the moved device's, on the node
  std::vector<netlink::RouteInfo> routes;
  std::string pci;  ///< the device's PCI address ("" when none)
  RdmaPlan rdma;
};

class Driver {
 public:
  virtual ~Driver() = default;
  /// The device the config selects, on the node; code 5/110 when it is not
  /// there, 7 for what this mode cannot do with it. Changes nothing.
  virtual base::Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const = 0;
  /// With the device held: reads what the plan needs into `t`. Changes nothing.
  virtual base::Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const = 0;
  /// Pure: the plan from the config, the target and the pod's table.
  virtual base::Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                                      uint32_t table) const = 0;

  /// DEL without a readable state (del.cpp): undoes what only this mode
  /// knows, from the config and the kernel, appending what failed.
  virtual void UndoWithoutState(Context& /*ctx*/, const StateStore& /*store*/, const std::string& /*path*/,
                                StepEnv& /*env*/, const std::string& /*pod_name*/,
                                std::vector<base::Error>& /*errors*/) const {}
  /// CHECK: whether attachment `st` has an interface in the pod to look at (a VF bound to vfio-pci has none:
  /// only its steps are checked).
  virtual bool HasPodLink(const AttachmentState& /*st*/) const { return true; }
  /// STATUS: whether the device `query` selects is there though it has no
  /// netdev on the node (a VF bound to vfio-pci).
  virtual bool PresentWithoutNetdev(const Context& /*ctx*/, const DeviceQuery& /*query*/) const {
    return false;
  }
};

/// The state every plan starts from: the attachment's names.
AttachmentState NewState(const Context& ctx, const std::string& pod_name, uint32_t table);

/// The RDMA plan of the device a link mode takes (`t.device`): its pairing
/// and netns mode, or the Soft-RoCE device to make for it (ResolveRdma).
base::Status ResolveTargetRdma(Context& ctx, const RdmaAccess& rdma, Target& t);

/// The RDMA netns mode switch `rdma` plans, as the plan's node steps.
std::vector<Step> RdmaNodeSteps(const RdmaPlan& rdma);

/// The plan of a mode that brings a link into the pod (`arrival`: the move or the child's creation): state,
/// addresses, link steps, RDMA, SMC-R, and the log line's "<device> as <pod name> (table N...)".
Plan LinkPlan(const Context& ctx, const Target& t, const std::string& pod_name, uint32_t table, Step arrival,
              bool set_mac);

/// Finds the device a query selects on the node, or the error saying why it
/// is not there (in use by another attachment: 11; not there: 5 or 110).
base::Result<netlink::LinkInfo> FindOnNode(Context& ctx, const StateStore& store, const RdmaAccess& rdma,
                                           const DeviceQuery& query);

/// Whether the claim of `owner` stops blocking once its holder, if provably dead, is recovered
/// (Context::recover_stale_claim); false when no recovery is set.
base::Result<bool> FreeStaleClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner);

}  // namespace cni

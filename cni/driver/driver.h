// A driver per mode: what differs between move, child, vf and none in the one ADD pipeline (add.cpp,
// docs/architecture.md). Drivers are found through cni/driver/registry.h.
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
#include "conf/fields.h"
#include "ipam/ipam.h"

namespace cni {

class StateStore;

/// The node's RDMA netlink: null when the kernel has none, `error` saying why.
struct RdmaAccess {
  netlink::Rdma* host = nullptr;
  const base::Error* error = nullptr;
};

/// How an attachment holds its node device (cni/state/claim.h); ADD takes it through HoldGuard (add.cpp).
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
  /// The device the config selects on the node; code 5/110 when it is not there, 7 when this mode cannot
  /// take it. Changes nothing.
  virtual base::Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const = 0;
  /// With the device held: reads what the plan needs into `t`. Changes nothing.
  virtual base::Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const = 0;
  /// Pure: the plan from the config, the target and the pod's table.
  virtual base::Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                                      uint32_t table) const = 0;

  /// DEL without a readable state: undoes what only this mode knows, appending what failed.
  virtual void UndoWithoutState(Context& /*ctx*/, const StateStore& /*store*/, const std::string& /*path*/,
                                StepEnv& /*env*/, const std::string& /*pod_name*/,
                                std::vector<base::Error>& /*errors*/) const {}
  /// CHECK: whether `st` has an interface in the pod (a VF bound to vfio-pci has none).
  virtual bool HasPodLink(const AttachmentState& /*st*/) const { return true; }
  /// STATUS: whether the device `query` selects is there without a netdev (a VF bound to vfio-pci).
  virtual bool PresentWithoutNetdev(const Context& /*ctx*/, const DeviceQuery& /*query*/) const {
    return false;
  }
};

/// Reads the mode option `v`, a string among the names of `names` ({name, value} pairs), into `out`. Code 7
/// naming `key` for anything else (`is_not`: what an unknown string "is not"), listing the names.
template <class Names, class E>
base::Status ParseName(const nlohmann::json& v, const std::string& key, const std::string& is_not,
                       const Names& names, E& out) {
  std::string fix = "use ";
  for (size_t i = 0; i < std::size(names); ++i)
    fix += (i == 0 ? "" : i + 1 < std::size(names) ? ", " : " or ") + conf::Quote(names[i].first);
  if (!v.is_string()) return conf::Invalid(key + ": must be a string; " + fix);
  const auto& s = v.get_ref<const std::string&>();
  for (const auto& [name, value] : names)
    if (s == name) {
      out = value;
      return base::Ok();
    }
  return conf::Invalid(key + ": " + conf::Quote(s) + " is not " + is_not + "; " + fix);
}

/// The one instance of driver `T`, a conf::ModeSpec's `driver`.
template <class T>
const Driver& DriverOf() {
  static const T driver;
  return driver;
}

/// The state every plan starts from: the attachment's names.
AttachmentState NewState(const Context& ctx, const std::string& pod_name, uint32_t table);

/// ResolveRdma for `t.device`, with a warning when it is unusable.
base::Status ResolveTargetRdma(Context& ctx, const RdmaAccess& rdma, Target& t);

/// The RDMA netns mode switch `rdma` plans, as the plan's node steps.
std::vector<Step> RdmaNodeSteps(const RdmaPlan& rdma);

/// The plan of a mode that brings a link into the pod (`arrival`: the move or the child's creation): state,
/// addresses, link steps, RDMA, SMC-R, and the log line's "<device> as <pod name> (table N...)".
Plan LinkPlan(const Context& ctx, const Target& t, const std::string& pod_name, uint32_t table, Step arrival,
              bool set_mac);

/// The device `query` selects on the node; code 11 when another attachment holds it, else 5 or 110.
base::Result<netlink::LinkInfo> FindOnNode(Context& ctx, const StateStore& store, const RdmaAccess& rdma,
                                           const DeviceQuery& query);

/// Whether `owner`'s claim stops blocking once its provably dead holder is recovered; false without recovery.
base::Result<bool> FreeStaleClaim(Context& ctx, const StateStore& store, const ClaimOwner& owner);

}  // namespace cni

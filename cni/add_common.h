// Pieces ADD's modes share (add.cpp, add_vf.cpp). Internal to cni/.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/claim.h"
#include "cni/commands.h"
#include "cni/device.h"
#include "cni/journal.h"
#include "cni/state.h"
#include "cni/vf.h"
#include "ipam/ipam.h"

namespace cni {

/// Our interface's name in the pod: ifName when chained (CNI_IFNAME is the
/// primary's), else CNI_IFNAME.
std::string PodIfName(const Context& ctx);

/// The addresses of an IPAM result; kIpam when there are none.
base::Result<std::vector<ipam::IpConfig>> IpsFromIpam(const nlohmann::json& result);

/// Journals the IPAM step and runs IPAM ADD; when the plugin never started
/// (Error::changed_nothing), the step leaves the journal again: nothing to
/// release.
base::Result<nlohmann::json> RunIpamAdd(Context& ctx, Journal& journal, StepEnv& env);

/// After a failed ADD: undoes the journal; with everything undone, removes
/// the state and returns `err`; otherwise keeps the state for DEL and returns
/// code 102 with what could not be undone.
base::Error RollBack(base::Error err, AttachmentState& st, StepEnv& env, Journal& journal,
                     const StateStore& store, const std::string& path);

/// Mode vf: the VF the config selects. A PCI address goes to sysfs directly;
/// a netdev name, MAC or RDMA device is found on the node first and its PCI
/// address taken from sysfs. nullopt when a selected netdev is not on the
/// node. Code 7 when the device is no VF.
base::Result<std::optional<VfTarget>> FindVfTarget(Context& ctx, netlink::Rdma* rdma, const DeviceQuery& q,
                                                   netlink::Vf& vfs);

/// The error for a VF that has a kernel driver (or none) but no netdev on
/// the node and that no attachment claims.
base::Error VfWithoutNetdev(const Context& ctx, const VfTarget& vf);

/// Mode vf for a VF bound to a user-space driver (vfio-pci): its settings go
/// through the PF, IPAM runs when configured, nothing moves; the result
/// carries the VF's PCI address (pciID, CNI 1.1.0) and IPAM's addresses.
base::Result<nlohmann::json> AddUserspaceVf(Context& ctx, const StateStore& store, const std::string& path,
                                            const VfTarget& vf, netlink::Vf& vfs);

/// Removes the file of a claim that has no owner yet when ADD gives up, so
/// that a refused ADD leaves dataDir as it was; Disarm once the owner is
/// written (from there the journal's rollback removes it).
class NewClaimGuard {
 public:
  NewClaimGuard(std::optional<DeviceClaim>& claim, bool armed) : claim_(claim), armed_(armed) {}
  NewClaimGuard(const NewClaimGuard&) = delete;
  NewClaimGuard& operator=(const NewClaimGuard&) = delete;
  ~NewClaimGuard() {
    if (armed_ && claim_) claim_->Remove();
  }
  void Disarm() { armed_ = false; }

 private:
  std::optional<DeviceClaim>& claim_;
  bool armed_;
};

/// What ADD attaches (add_target.cpp).
struct AddTarget {
  netlink::LinkInfo device;            ///< on the node: the device to move, the VF's netdev, or the parent
  std::unique_ptr<netlink::Vf> vfs;    ///< mode vf: the node's VF handle
  std::optional<VfTarget> vf;          ///< mode vf: the VF, its PF and what the PF says about it
  std::optional<DeviceClaim> claim;    ///< move and vf: held, locked; no owner written yet
  bool new_claim = false;              ///< the claim had no owner: a refused ADD removes its file
  std::optional<nlohmann::json> done;  ///< a VF on a user-space driver: AddUserspaceVf's whole result
};

/// ADD's step 1: the device cfg.device selects (mode vf: the VF, and for a VF
/// on a user-space driver the whole ADD, in `done`), on the node; for move
/// and vf claimed. Code 11 when another attachment holds it or children of
/// other pods hang from it, 5/110 (kDeviceNotFound, kRdmaUnavailable) when
/// it is not there. `rdma` is null when the node has no RDMA netlink, with
/// `rdma_error` saying why.
base::Result<AddTarget> FindAddTarget(Context& ctx, const StateStore& store, const std::string& path,
                                      netlink::Rdma* rdma, const base::Error* rdma_error);

}  // namespace cni

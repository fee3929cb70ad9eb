// Device claims: one lock file per node device under <dataDir>/devices/, so two pods can never take the same
// device. The file is flock'ed for the duration of an ADD or DEL and, while the device is attached, names the
// attachment that owns it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file.h"

namespace cni {

struct ClaimOwner {
  std::string network;
  std::string container_id;
  std::string if_name;     ///< CNI_IFNAME of the owning attachment
  std::string state_path;  ///< the owner's state file; a claim whose state is gone is stale
  std::string device;      ///< the device's node name
  std::string mac;
  std::string pci;
  /// The node steps ADD's driver had the claim keep (Plan::claim_steps; mode vf: its VF step, the PF, the VF
  /// and its old settings), as the state spells them, so that a DEL without a readable state can undo them.
  std::vector<nlohmann::json> steps;
  /// The device was down on the node when ADD took it ("down": true; a claim without it, up): a DEL without a
  /// readable state brings it home as it was.
  bool down = false;
  bool operator==(const ClaimOwner&) const = default;
};

class DeviceClaim {
 public:
  /// Locks the claim of node device `device` (waits at most wait_ms).
  static base::Result<DeviceClaim> Lock(const std::string& devices_dir, const std::string& device,
                                        int wait_ms);
  /// The recorded owner; nullopt when none or unreadable.
  std::optional<ClaimOwner> Owner() const;
  base::Status SetOwner(const ClaimOwner& owner);
  /// The device is free again: drop the file, and its entries in the claims' index, while still holding the
  /// lock.
  void Remove();
  /// Forgets the owner, keeping the file and the lock: the claim of an ADD that goes on holding it (its Own
  /// writes the new owner into this file; a removed one would be another file to the next Lock).
  void Clear();

 private:
  explicit DeviceClaim(base::FileLock lock) : lock_(std::move(lock)) {}
  base::FileLock lock_;
};

/// A claim lock the caller holds already (an ADD that recovers a stale holder of its device): what would lock
/// the same file again uses this one, since flock on a second descriptor of the file waits for ourselves.
struct LockedClaim {
  DeviceClaim& claim;
  std::string device;  ///< the node device it is the claim of
};

// The claims' index: <devicesDir>/.by:id/ holds hard links to the claim files, one per MAC address, PCI
// address and owner's state file a claim names (mac=<MAC>, pci=<address>, state=<ShareName>). SetOwner links
// them, under the claim's lock, before it writes the owner; Remove unlinks them after the claim file. A
// lookup reads one entry and trusts it only when the claim file of the device its owner names is that same
// file and the owner names the key; the directory `.built` says every claim of the data dir is in the index
// (docs/decisions/claims-index.md).

/// Makes the index of a data dir whose claims were written by an erdma-cni without it: every live claim is
/// linked, then the directory `.built` made. One stat when it is there already. ADD and GC call it.
base::Status EnsureClaimIndex(const std::string& devices_dir);

/// The live owner of a device, matched by node name, MAC or PCI address, read without locking: the claim
/// file of the name and the index's entries for the MAC and the PCI address. Without an index, every claim
/// is read, once per ClaimLookup (docs/decisions/claims-read-once.md).
class ClaimLookup {
 public:
  explicit ClaimLookup(std::string devices_dir);
  std::optional<ClaimOwner> Find(const std::string& name, const std::string& mac, const std::string& pci);

 private:
  std::string devices_dir_;
  bool indexed_ = false;
  std::optional<std::vector<ClaimOwner>> all_;  // read on the first Find of a data dir without an index
};

/// ClaimLookup(devices_dir).Find(name, mac, pci).
std::optional<ClaimOwner> FindClaim(const std::string& devices_dir, const std::string& name,
                                    const std::string& mac, const std::string& pci);

/// True when `owner` still holds the device: its state file exists.
bool ClaimIsLive(const ClaimOwner& owner);

/// The claim whose owner's state is `state_path` (read without locking; through the index's state= entry).
std::optional<ClaimOwner> ClaimOf(const std::string& devices_dir, const std::string& state_path);

/// "<what> is in use by container C (network N, interface I); it returns when
/// that attachment is deleted" (code 11).
base::Error InUseError(const std::string& what, const ClaimOwner& owner);

// Shares. Children (a child mode's links) share their parent, so they take no claim. But a mode that takes
// the whole device (move, vf) must not take a parent that other pods' children hang from: the kernel allows
// it and leaves the children on a device in another pod's netns. So each child attachment records a share,
// <childrenDir>/<parent>/<name>, naming its owner like a claim does. Shares are made, checked and removed
// only under the parent's claim lock; a share whose owner's state file is gone is stale.

/// Child ADD: under the parent's lock, refuses (code 11) when an attachment owns the parent, else records
/// `owner` as a share of it. The owner's state file must exist already: a share without one counts as stale.
base::Status ShareParent(const std::string& devices_dir, const std::string& children_dir,
                         const std::string& parent, const ClaimOwner& owner, int wait_ms);

/// The live shares of `parent`; removes the stale ones. The caller holds the parent's claim lock.
std::vector<ClaimOwner> LiveShares(const std::string& children_dir, const std::string& parent);

/// Code 11 for a move or vf ADD of `device` that children hang from.
base::Error SharedError(const std::string& what, const std::string& device,
                        const std::vector<ClaimOwner>& sharers);

/// Removes the share of the attachment whose state is `state_path`, under whichever parent it is. Best effort
/// (DEL and GC go on): a share left behind is stale once the state is gone, and the next check removes it.
/// `locked_parent`: a parent whose claim lock the caller holds; its share file goes, its directory is left to
/// the caller's LiveShares.
void DropShares(const std::string& devices_dir, const std::string& children_dir,
                const std::string& state_path, int wait_ms, const std::string& locked_parent = "");

/// A claim or a share as diag lists them (read without locking).
struct HoldRecord {
  std::string device;  ///< the node device (a share: the parent)
  bool share = false;  ///< a child's share of its parent, not a claim of the whole device
  ClaimOwner owner;
  bool live = false;  ///< the owner's state file exists
};
std::vector<HoldRecord> ListHolds(const std::string& devices_dir, const std::string& children_dir);

/// GC: removes every stale share.
void SweepShares(const std::string& devices_dir, const std::string& children_dir, int wait_ms);

}  // namespace cni

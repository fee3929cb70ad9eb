// Device claims: one lock file per node device under <dataDir>/devices/, flock'ed during an ADD or DEL and
// naming, while the device is attached, the attachment that owns it (docs/architecture.md, "Device claims").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
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
  /// The node steps ADD's driver had the claim keep (Plan::claim_steps), for a DEL without a readable state.
  std::vector<nlohmann::json> steps;
  /// The device was down on the node when ADD took it ("down"; absent: up).
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
  /// The device is free again: drops the file and its index entries, still holding the lock.
  void Remove();
  /// Forgets the owner, keeping the file and the lock, for an ADD that goes on holding it.
  void Clear();

 private:
  explicit DeviceClaim(base::FileLock lock) : lock_(std::move(lock)) {}
  base::FileLock lock_;
};

/// A claim lock the caller holds: used instead of locking the file again (flock would wait for ourselves).
struct LockedClaim {
  DeviceClaim& claim;
  std::string device;  ///< the node device it is the claim of
};

// The claims' index, <devicesDir>/.by:id/: hard links to claim files by MAC, PCI address and owner's state,
// trusted only when they match the claim file (docs/decisions/claims-index.md).

/// Links every live claim of a data dir written without the index, then makes `.built`; one stat once built.
base::Status EnsureClaimIndex(const std::string& devices_dir);

/// The live owner of a device by node name, MAC or PCI address, read without locking; without an index,
/// every claim is read once per ClaimLookup (docs/decisions/claims-read-once.md).
class ClaimLookup {
 public:
  explicit ClaimLookup(std::string devices_dir);
  std::optional<ClaimOwner> Find(const std::string& name, const std::string& mac, const std::string& pci);

 private:
  std::string devices_dir_;
  bool indexed_ = false;
  /// (file name, owner) of every claim, read on the first Find of a data dir without an index.
  std::optional<std::vector<std::pair<std::string, ClaimOwner>>> all_;
};

/// ClaimLookup(devices_dir).Find(name, mac, pci).
std::optional<ClaimOwner> FindClaim(const std::string& devices_dir, const std::string& name,
                                    const std::string& mac, const std::string& pci);

/// True when `owner` still holds the device: its state file exists.
bool ClaimIsLive(const ClaimOwner& owner);

/// The claim whose owner's state is `state_path` (read without locking; through the index's state= entry).
std::optional<ClaimOwner> ClaimOf(const std::string& devices_dir, const std::string& state_path);

/// Code 11 naming the container, network and interface that hold `what`.
base::Error InUseError(const std::string& what, const ClaimOwner& owner);

// Shares: a child attachment's record of its parent, <childrenDir>/<parent>/<name>, so that no move or vf
// ADD takes a parent children hang from; made under the parent's claim lock (docs/architecture.md).

/// Child ADD: under the parent's lock, code 11 when an attachment owns the parent, else records `owner`'s
/// share. The owner's state file must exist already: a share without one is stale.
base::Status ShareParent(const std::string& devices_dir, const std::string& children_dir,
                         const std::string& parent, const ClaimOwner& owner, int wait_ms);

/// The live shares of `parent`; removes the stale ones. The caller holds the parent's claim lock.
std::vector<ClaimOwner> LiveShares(const std::string& children_dir, const std::string& parent);

/// Code 11 for a move or vf ADD of `device` that children hang from.
base::Error SharedError(const std::string& what, const std::string& device,
                        const std::vector<ClaimOwner>& sharers);

/// Removes the share of the attachment at `state_path`, best effort (a share left is stale once the state is
/// gone). `locked_parent`: a parent whose lock the caller holds; its directory is left to LiveShares.
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

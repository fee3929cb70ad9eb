// Device claims: one lock file per node device under <dataDir>/devices/, so
// two pods can never take the same device. The file is flock'ed for the
// duration of an ADD or DEL and, while the device is attached, names the
// attachment that owns it.
#pragma once

#include <optional>
#include <string>

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
  /// The device is free again: drop the file while still holding the lock.
  void Remove() { lock_.Unlink(); }

 private:
  explicit DeviceClaim(base::FileLock lock) : lock_(std::move(lock)) {}
  base::FileLock lock_;
};

/// Reads every claim without locking (for messages only): the owner of a
/// device that is not on the node, matched by node name, MAC or PCI address.
std::optional<ClaimOwner> FindClaim(const std::string& devices_dir, const std::string& name,
                                    const std::string& mac, const std::string& pci);

/// True when `owner` still holds the device: its state file exists.
bool ClaimIsLive(const ClaimOwner& owner);

/// The claim whose owner's state is `state_path` (read without locking).
std::optional<ClaimOwner> ClaimOf(const std::string& devices_dir, const std::string& state_path);

}  // namespace cni

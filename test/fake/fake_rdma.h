// A stateful, in-memory fake of netlink::Rdma for unit tests, living next to
// a fake::World (its namespaces and links are the World's; a namespace id is
// what World's Kernel handles return from NetnsFd(), so it is also what
// MoveDevice takes as netns_fd). Every mutating call is counted and logged
// so a test can fail the Nth one.
//
// Model, as the kernel behaves (drivers/infiniband/core/{device,nldev}.c):
//  - Device indices are global and never reused (xa_alloc_cyclic). Names are
//    unique system wide; a taken name is ENFILE (assign_name).
//  - Shared mode: every device lives in root and every live namespace sees
//    it. Exclusive mode: a namespace sees only its own devices; an index it
//    cannot see is EINVAL (ib_device_get_by_index fails).
//  - A port lists its netdev (index and current name, from the World) only
//    to the namespace that netdev is in (fill_port_info).
//  - SetNetnsMode to the current mode succeeds; switching fails with EBUSY
//    while any namespace but root is alive (rdma_compatdev_set).
//  - MoveDevice: EOPNOTSUPP in shared mode and for can_move=false devices (no
//    disassociate_ucontext, e.g. rxe before 7.x); EBADF for an id that is no
//    namespace, ENODEV for a deleted one; to its own namespace, a no-op.
//  - AddSoftDevice ("rxe" or "siw", else EINVAL): the netdev is looked up in
//    the caller's namespace (ENODEV); one rxe per netdev (EEXIST); the new
//    device starts in root (ib_alloc_device puts it in init_net), one port
//    whose netdev is that link, node GUID from its MAC (rxe's EUI-64 rule).
//  - DelDevice removes soft devices only (others: EINVAL, no
//    IBK_ALLOW_USER_UNREG).
//  - A soft device dies when its netdev is destroyed or leaves the namespace
//    it was in at creation (rxe's NETDEV_UNREGISTER notifier). When a
//    namespace is deleted, its devices go back to root (rdma_dev_exit_net).
//    The fake applies both lazily, at its next call or inspection: a netdev
//    that leaves and comes back between two RDMA calls goes unnoticed.
//  - A handle bound to a deleted namespace sees no device and its verbs fail
//    as for a device it cannot see.
#pragma once

#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "netlink/rdma_kernel.h"
#include "test/fake/call_log.h"
#include "test/fake/fake_kernel.h"

namespace fake {

class FakeRdma;

/// An RDMA device as a test sets it up.
struct RdmaDeviceSpec {
  std::string name;          ///< "erdma_0"
  int netns = World::kRoot;  ///< where it lives (exclusive mode; shared mode keeps all in root)
  int netdev_index = 0;      ///< port 1's netdev, a World link index; 0 = none
  std::string node_guid;     ///< "0216:3eff:fe10:f8b0"; empty = GuidFromMac(netdev's MAC)
  uint32_t num_ports = 1;
  std::string protocol = "roce";
  bool can_move = true;  ///< false: MoveDevice answers EOPNOTSUPP
  bool soft = false;     ///< rxe/siw: DelDevice may remove it; dies with its netdev
  uint8_t state = netlink::kPortStateActive;
  uint8_t phys_state = netlink::kPhysStateLinkUp;
};

/// The RDMA side of a World. Not copyable; it and the World must outlive
/// every handle it gives out. Setup methods throw std::invalid_argument on a
/// bad request (a test bug) and are neither counted nor logged. Mutating
/// calls (CallLog, its own counter, separate from World's): SetNetnsMode,
/// MoveDevice, AddSoftDevice, DelDevice, on any handle.
class RdmaWorld : public CallLog {
 public:
  explicit RdmaWorld(World& world, netlink::NetnsMode mode = netlink::NetnsMode::kShared);
  ~RdmaWorld();
  RdmaWorld(const RdmaWorld&) = delete;
  RdmaWorld& operator=(const RdmaWorld&) = delete;

  /// A handle speaking to one World namespace, like OpenRdma in it.
  std::unique_ptr<netlink::Rdma> Rdma(int ns_id);

  /// Adds a device as if its driver had just registered it; returns its index.
  uint32_t AddDevice(RdmaDeviceSpec spec);
  /// Sets the mode without the kernel's checks (boot-time ib_core netns_mode).
  void SetMode(netlink::NetnsMode mode) { mode_ = mode; }
  netlink::NetnsMode mode() const { return mode_; }
  /// Whether soft devices made by AddSoftDevice can move (7.x rxe can; 6.x cannot).
  void SetSoftDevicesCanMove(bool can) { soft_can_move_ = can; }

  /// The namespace a device is in now; -1 when it does not exist.
  int NetnsOfDevice(uint32_t index);
  /// The index of the device with this name; nullopt when none.
  std::optional<uint32_t> DeviceIndex(const std::string& name);
  /// One line per device in index order, e.g.
  /// "erdma_0 index 1 in pod guid 0216:3eff:fe10:f8b0 netdev 5 soft", then
  /// "mode exclusive". Compare before/after a rolled-back operation.
  std::string Describe();

 private:
  friend class FakeRdma;

  struct Device {
    uint32_t index = 0;
    RdmaDeviceSpec spec;
    int netdev_netns = -1;  // soft devices: the namespace their netdev was in at creation
  };

  /// Applies what happened in the World since the last call: soft devices
  /// whose netdev went away die, devices of deleted namespaces go to root.
  void Reconcile();
  bool Visible(const Device& d, int ns) const;
  Device* Find(uint32_t index);
  std::string NsName(int id) const;

  World& world_;
  netlink::NetnsMode mode_;
  bool soft_can_move_ = true;
  std::vector<Device> devices_;  // by index
  uint32_t next_index_ = 1;
};

}  // namespace fake

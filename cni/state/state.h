// The per-attachment state file: what the device looked like on the node before ADD, and the write-ahead
// journal of every step ADD took. DEL, GC and rollback all read it; it is written before each step runs.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/core/steps.h"
#include "cni/state/device_info.h"
#include "netlink/netns_liveness.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// The device as it was on the node before ADD: everything DEL restores.
struct DeviceOrigin {
  std::string name;  ///< its node name, the key of its claim; a VF without a netdev: its PCI address
  int index = 0;
  std::string mac;
  uint32_t mtu = 0;
  bool up = false;
  std::string kind;
  std::vector<netlink::AddrInfo> addrs;    ///< all but IPv6 link-local
  std::vector<netlink::RouteInfo> routes;  ///< routes through it, not made by the kernel
};

struct AttachmentState {
  static constexpr int kFormat = 1;
  std::string network;
  std::string container_id;
  std::string if_name;  ///< CNI_IFNAME: the attachment key
  std::string netns;    ///< CNI_NETNS at ADD
  /// That netns's identity ("netnsId"; older states lack it): how stale recovery tells the pod is gone.
  std::optional<netlink::NetnsId> netns_id;
  std::string pod_if_name;  ///< our interface's name in the pod
  uint32_t table = 0;       ///< policy routing table in the pod
  std::string rdma_device;  ///< the RDMA device the pod got ("" = none)
  std::string rdma_mode;    ///< "shared" or "exclusive" when rdma_device is set
  DeviceOrigin origin;
  std::vector<Step> steps;  ///< in the order they were (about to be) applied
  /// A group (cni/command/group.h) of StepMembers ("group", written only when true).
  bool group = false;
  /// A group's member: the group's ifName ("memberOf", absent otherwise).
  std::optional<std::string> member_of;
  /// The device-info file ADD wrote (cni/state/device_info.h; "deviceInfo", absent when none).
  std::optional<DeviceInfoFile> device_info;
  bool complete = false;  ///< ADD returned success
  nlohmann::json result;  ///< the result ADD returned (null until complete)
};

/// The state file's text.
std::string StateText(const AttachmentState& s);
/// kState with the reason when the JSON is not a state of our format.
base::Result<AttachmentState> StateFromJson(const nlohmann::json& j);

/// sys_errno of Load's kState for a file that parses but holds what ADD never writes: DEL refuses it rather
/// than salvage from the claim, since nothing in it can be trusted.
inline constexpr int kHostileState = EBADMSG;

/// The largest state file erdma-cni reads back; ADD refuses to write more.
inline constexpr size_t kMaxStateBytes = 4 << 20;

/// Where attachments live: <dataDir>/<network>/@<containerID>@<ifname>, the interface name's '%' and '.'
/// written %25 and %2e. A container ID holds no '@', so the name splits one way only. No name of the older
/// format <containerID>-<ifname> starts with '@', so the two never name the same file.
class StateStore {
 public:
  StateStore(std::string data_dir, std::string network)
      : data_dir_(std::move(data_dir)), network_(std::move(network)) {}

  static std::string FileName(const std::string& container_id, const std::string& if_name);
  /// The name older erdma-cni gave the file: ambiguous ("p", "q-net1" and "p-q", "net1" share it), so such a
  /// file counts only when what it holds is the attachment asked for.
  static std::string LegacyFileName(const std::string& container_id, const std::string& if_name) {
    return container_id + "-" + if_name;
  }

  /// A group's file: FileName's with "%group", which no escaped interface name ends in.
  static std::string GroupFileName(const std::string& container_id, const std::string& if_name) {
    return FileName(container_id, if_name) + "%group";
  }
  std::string GroupPathFor(const std::string& container_id, const std::string& if_name) const {
    return Dir() + "/" + GroupFileName(container_id, if_name);
  }

  std::string Dir() const { return data_dir_ + "/" + network_; }
  /// Every name a state of (container_id, if_name) may have here: its group's, its own, an older erdma-cni's.
  std::array<std::string, 3> PathsOf(const std::string& container_id, const std::string& if_name) const {
    return {GroupPathFor(container_id, if_name), PathFor(container_id, if_name),
            Dir() + "/" + LegacyFileName(container_id, if_name)};
  }
  /// Where ADD writes the state of (container_id, if_name).
  std::string PathFor(const std::string& container_id, const std::string& if_name) const {
    return Dir() + "/" + FileName(container_id, if_name);
  }
  /// The state of (container_id, if_name), nullopt when none, and in `*path` its file: PathFor's, or an older
  /// erdma-cni's name when that file is this attachment's (by content, or unreadable, by its claim).
  base::Result<std::optional<AttachmentState>> LoadLocated(const std::string& container_id,
                                                           const std::string& if_name,
                                                           std::string* path) const;
  std::string DevicesDir() const { return data_dir_ + "/devices"; }
  /// Children's shares of their parents (cni/state/claim.h).
  std::string ChildrenDir() const { return data_dir_ + "/children"; }
  const std::string& DataDir() const { return data_dir_; }
  const std::string& Network() const { return network_; }

  /// Creates the directories (0700, no symlinks).
  base::Status Prepare() const;
  /// For commands that create nothing: the directories Prepare makes, where they exist, pass
  /// base::CheckPrivateDir; kIo naming the one that does not.
  base::Status Check() const;
  /// nullopt when there is no state; kState when it is unreadable, fails ValidateState, belongs to another
  /// network, or holds an attachment other than the one its file name says.
  base::Result<std::optional<AttachmentState>> Load(const std::string& path) const;
  /// kState, writing nothing, when the text would exceed kMaxStateBytes.
  base::Status Save(const std::string& path, const AttachmentState& s) const;
  /// Removes a state file, and the network's directory when left empty (Save makes it again).
  base::Status Remove(const std::string& path) const;
  /// Paths of every state file of this network.
  base::Result<std::vector<std::string>> List() const;

 private:
  std::string data_dir_;
  std::string network_;
};

/// Each state file of every network in `data_dir` (reserved names aside), with its network's store, until
/// `each` returns true. With `refused` set, a network whose directories fail StateStore::Check goes to it and
/// is skipped. True when `each` stopped the walk or `data_dir` could not be listed.
bool ForEachState(const std::string& data_dir,
                  const std::function<bool(const StateStore&, const std::string& path)>& each,
                  const std::function<void(const base::Error&)>& refused = nullptr);

/// Whether an attachment other than `self`, in any network of the dataDir, journaled the SMC UEID `ueid`.
bool UeidUsedElsewhere(const StateStore& store, const std::string& self, const std::string& ueid);

}  // namespace cni

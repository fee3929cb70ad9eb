// Which node devices an attachment of device.resource or device.pool takes, decided at ADD (DEL and CHECK
// read the device each attachment recorded): the ones the kubelet gave the pod, or free ones of a pool.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/core/context.h"
#include "conf/config.h"
#include "kubelet/pod_devices.h"

namespace cni {

/// One device an attachment may take, and why.
struct DeviceCandidate {
  conf::DeviceSelector selector;  ///< a kDeviceId (the kubelet's ID) or a kName (a pool's device)
  std::string why;  ///< "the kubelet gave the pod erdma_1/17", "NUMA node 1, with the pod's GPUs"
};

struct DeviceChoice {
  size_t want = 1;  ///< how many devices the attachment takes
  /// Candidates are alternatives in order of preference (a pool): one another pod took meanwhile is passed
  /// over for the next. Otherwise each is one device the kubelet gave the pod, taken in order.
  bool alternatives = false;
  std::vector<DeviceCandidate> candidates;
};

/// At ADD, for a device.resource or device.pool: asks the kubelet (podResourcesSocket) for the pod's devices
/// of the resource, or for a pool its GPUs (best effort). `answer`: the kubelet's answer where
/// WhatThePodAsked already asked. Errors name the resource or the pool and what was found: kInvalidEnv
/// without the pod's name where the kubelet must be asked; kTryAgainLater when the kubelet is not there or
/// the pool has too few free devices; kDeviceNotFound when the pod has fewer devices of the resource than
/// device.count asks for; kInvalidConfig when `count: "all"` matches more than conf::kMaxDevices.
base::Result<DeviceChoice> ChooseDevices(Context& ctx,
                                         std::optional<kubelet::PodAllocation> answer = std::nullopt);

/// The devices of `pool` on the node that are free (no live claim, for modes that take a device alone; not
/// the node's own) and usable (WhyUnusable), ranked by RankRails (`gpus` null: the pod's GPUs are unknown).
/// `passed_over` gets the pool's devices left out and why.
base::Result<std::vector<DeviceCandidate>> PoolCandidates(Context& ctx, const conf::DevicePool& pool,
                                                          const kubelet::PodAllocation* gpus,
                                                          std::string* passed_over = nullptr);

/// The pod-side name of device `k` of an attachment that takes several: `base` with its trailing number plus
/// k ("erdma0" -> "erdma1", "net1" -> "net2"), or `base` followed by k when it ends in no digit ("rdma" ->
/// "rdma0"). "" when that is longer than an interface name may be.
std::string MemberName(const std::string& base, size_t k);

/// Code 7 when `dev` is `lo` or carries the node's default route, unless the node file allows it
/// (allowNodeDevices): modes that take a device from the node would cut the node off its network.
base::Status RefuseNodeOwnDevice(Context& ctx, const netlink::LinkInfo& dev);

}  // namespace cni

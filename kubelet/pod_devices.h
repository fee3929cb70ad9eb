// The devices the kubelet gave a pod, from its pod-resources API v1 (kubelet/podresources.proto). The kubelet
// assigns devices when it admits a pod, before the sandbox exists, so they are known at CNI ADD.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace kubelet {

/// The kubelet's socket for the API.
inline constexpr const char* kDefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";
/// How long the kubelet may take to answer one ADD, retry included.
inline constexpr std::chrono::milliseconds kTimeLimit{3000};
/// NVIDIA's device plugin's resource: the pod's GPUs, whose NUMA nodes a pool prefers.
inline constexpr const char* kGpuResource = "nvidia.com/gpu";
/// The most device IDs of one resource an answer may give one pod (more than any node has): more is hostile.
inline constexpr size_t kMaxDeviceIds = 1024;

/// One device ID of the resource asked for, as the device plugin named it (`erdma_1/17`, `eni-3`), with the
/// NUMA nodes the kubelet reports for it (empty when it reports no topology).
struct Device {
  std::string id;
  std::vector<int64_t> numa_nodes;
  bool operator==(const Device&) const = default;
};

/// What the kubelet says of one pod.
struct PodAllocation {
  /// The IDs of the resource asked for, over all the pod's containers in the kubelet's order, each once.
  std::vector<Device> devices;
  /// The NUMA nodes of the pod's nvidia.com/gpu devices, ascending, each once.
  std::vector<int64_t> gpu_numa_nodes;
  /// Those GPUs as their device plugin names them, each with its NUMA nodes, in the kubelet's order.
  std::vector<Device> gpus;
  /// The method that answered: "Get", or "List" where Get is not served.
  std::string method;
};

/// The pod namespace/name and the resource the answer is for.
struct PodQuery {
  std::string ns;
  std::string pod;
  std::string resource;  ///< empty: no resource wanted, only the GPUs' NUMA nodes
};

/// Decodes a GetPodResourcesResponse for `q`, whose pod it must name. Pure, linear in its size; kDecoding,
/// also for more than kMaxDeviceIds IDs of q.resource or of the GPUs, or an ID of q.resource that is no
/// valid device ID (conf::IsValidDeviceId).
base::Result<PodAllocation> DecodeGetReply(const std::string& bytes, const PodQuery& q);

/// Decodes a ListPodResourcesResponse for q's pod; DecodeGetReply's errors, kTryAgainLater when not listed.
base::Result<PodAllocation> DecodeListReply(const std::string& bytes, const PodQuery& q);

/// Encodes the request messages.
std::string EncodeGetRequest(const PodQuery& q);
std::string EncodeListRequest();

/// Whether the kubelet on `socket_path` answers a List within `timeout`, as every ADD with device.resource
/// needs. The error names the socket: kTryAgainLater when no server listens there or it does not answer in
/// time, kIo for a gRPC failure, kDecoding for an answer that is not a ListPodResourcesResponse.
base::Status ListAnswers(const std::string& socket_path, std::chrono::milliseconds timeout);

/// Asks the kubelet on `socket_path` for the pod's devices of `q.resource` and its GPUs' NUMA nodes: Get, or
/// List where Get is not served (UNIMPLEMENTED, or UNKNOWN "PodResources API Get method disabled"), all
/// within `timeout`, decoding included. A call the kubelet's rate limit refuses is made once more. Errors
/// name the resource, the pod and what was found: kTryAgainLater when a retry can help (no socket, no answer
/// in time, the pod not listed, rate limited twice); kDeviceNotFound when the pod has no device of the
/// resource; kDecoding for an answer DecodeGetReply refuses; kIo for any other failure of the call.
base::Result<PodAllocation> PodDevices(const std::string& socket_path, const PodQuery& q,
                                       std::chrono::milliseconds timeout);

}  // namespace kubelet

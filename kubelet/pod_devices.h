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
/// The most device IDs of one resource (the one asked for, or the GPUs) an answer may give one pod: far more
/// devices than any node has slots or virtual functions for, so a larger answer is broken or hostile.
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
  /// Those GPUs as their device plugin names them (UUIDs, replicas, PCI
  /// addresses), each with its NUMA nodes, in the kubelet's order.
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

/// Decodes a GetPodResourcesResponse (the message bytes) for `q`: the pod it names must be q's. Pure, and
/// linear in the answer's size; errors are kDecoding, also for more than kMaxDeviceIds IDs of q.resource or
/// of the GPUs, and for an ID of q.resource that is no valid device ID (empty, control characters or spaces,
/// over 256 bytes: conf::IsValidDeviceId).
base::Result<PodAllocation> DecodeGetReply(const std::string& bytes, const PodQuery& q);

/// Decodes a ListPodResourcesResponse and picks q's pod. Pure, and linear in the answer's size; errors are
/// DecodeGetReply's, and kTryAgainLater when the pod is not listed.
base::Result<PodAllocation> DecodeListReply(const std::string& bytes, const PodQuery& q);

/// Encodes the request messages.
std::string EncodeGetRequest(const PodQuery& q);
std::string EncodeListRequest();

/// Asks the kubelet on `socket_path` for the pod's devices of `q.resource` and its GPUs' NUMA nodes: Get, or
/// List where Get is not served (UNIMPLEMENTED before kubelet 1.27; UNKNOWN "PodResources API Get method
/// disabled" without the KubeletPodResourcesGet feature gate). The calls and the decoding of their answers
/// take at most `timeout`; an answer decoded past it is kTryAgainLater. A call refused by the kubelet's rate
/// limit (RESOURCE_EXHAUSTED) is made once more. Errors name the resource, the pod and what was found:
/// kTryAgainLater when a retry can help (no socket, no answer, the pod not listed, rate limited twice);
/// kDeviceNotFound when the pod has no device of the resource; kDecoding for an answer DecodeGetReply
/// refuses; kIo for any other failure of the call.
/// Whether the kubelet on `socket_path` answers a List within `timeout` with a ListPodResourcesResponse: what
/// every ADD of a config with device.resource needs. The error names the socket: kTryAgainLater when no
/// server listens there or it does not answer in time, kIo for a gRPC failure, kDecoding for an answer that
/// is not the message.
base::Status ListAnswers(const std::string& socket_path, std::chrono::milliseconds timeout);

base::Result<PodAllocation> PodDevices(const std::string& socket_path, const PodQuery& q,
                                       std::chrono::milliseconds timeout);

}  // namespace kubelet

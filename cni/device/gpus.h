// Which GPUs a pod got, as PCI addresses: its kubelet IDs mapped through the NVIDIA driver's procfs files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace cni {

/// Longest kubelet device ID ParseGpuId reads.
inline constexpr size_t kMaxGpuIdBytes = 256;
/// Largest minor of a GPU's /dev/nvidia<minor> (254 and 255 are the modeset and control devices).
inline constexpr int kMaxNvidiaMinor = 247;
/// Largest driver/nvidia/gpus/<bdf>/information file read.
inline constexpr size_t kMaxNvidiaInformationBytes = 4096;
/// ACK's shared-GPU pod annotation: the /dev/nvidia minors of the GPUs a pod of aliyun.com/gpu-mem shares.
inline constexpr const char* kAckGpuIndexAnnotation = "ALIYUN_COM_GPU_MEM_IDX";

/// The forms a kubelet device ID of a GPU takes.
enum class GpuIdKind {
  kUuid,       ///< "GPU-<uuid>": one whole GPU (NVIDIA's device plugin)
  kReplica,    ///< "GPU-<uuid>::<n>": a time-slicing or MPS replica of that GPU
  kAckShared,  ///< "GPU-<uuid>-_-<n>": ACK gpushare's fake ID; the UUID need not be the pod's GPU
  kMig,        ///< "MIG-…" (a replica "MIG-…::<n>" too): only NVML maps it to its GPU
  kPci,        ///< a PCI address
  kIndex,      ///< a decimal index, taken as the minor of /dev/nvidia<index>
  kUnknown,    ///< none of these; `problem` says why
};

/// A kubelet device ID of a GPU, read.
struct GpuId {
  GpuIdKind kind = GpuIdKind::kUnknown;
  std::string id;       ///< as given (cut at kMaxGpuIdBytes)
  std::string uuid;     ///< kUuid, kReplica, kAckShared: "GPU-…" lower case; kMig: the ID without "::<n>"
  std::string pci;      ///< kPci: "%04x:%02x:%02x.%d"
  int index = -1;       ///< kIndex: 0..kMaxNvidiaMinor
  int replica = -1;     ///< kReplica, kAckShared, a MIG replica: the <n>
  std::string problem;  ///< kUnknown: what is wrong with it
};

/// Reads a kubelet device ID of a GPU; one of no known form, or too long, is kUnknown with `problem` set.
GpuId ParseGpuId(std::string_view id);

/// One GPU as the NVIDIA driver lists it in driver/nvidia/gpus/<bdf>/information.
struct NvidiaGpu {
  std::string pci;                  ///< "0000:00:06.0"
  std::optional<std::string> uuid;  ///< "GPU-…" lower case; absent when the driver had none to print
  std::optional<int> device_minor;  ///< the N of /dev/nvidiaN
};

/// Reads one information file of "Key: value" lines (`dir_name`: its directory, the GPU's BDF, the PCI
/// address without a "Bus Location"). kDecoding, naming the file, for a line without ':', control characters,
/// a key given twice, a malformed value of a key it reads, a Bus Location other than the directory, or a file
/// naming none of GPU UUID, Bus Location and Device Minor.
base::Result<NvidiaGpu> ParseNvidiaGpuInformation(std::string_view text, std::string_view dir_name);

/// Every GPU under <procfs_root>/driver/nvidia/gpus/, in BDF order; none without that directory. An entry
/// that is no BDF or vanished (hot unplug) is skipped; a file that cannot be read or parsed fails the whole
/// read, so that the caller maps no GPU by guess.
base::Result<std::vector<NvidiaGpu>> ReadNvidiaGpus(const std::string& procfs_root);

/// One GPU of a pod.
struct PodGpu {
  /// The kubelet IDs it came from (replicas of one GPU collapse into one
  /// PodGpu), or "ALIYUN_COM_GPU_MEM_IDX=<n>" for a GPU the annotation named.
  std::vector<std::string> ids;
  std::string pci;  ///< its PCI address; "" when it could not be mapped
  std::string why;  ///< for the log: how it was mapped, or why not and what ranking falls back to
};

/// The distinct GPUs of a pod, in the order of the IDs: a GPU UUID maps through the driver files' GPU UUID,
/// an index through Device Minor, a PCI address is itself. `ack_mem_idx`, the pod's ALIYUN_COM_GPU_MEM_IDX
/// annotation ("" when absent), lists the /dev/nvidia minors gpushare gives instead of the GPUs its fake IDs
/// name; it is read only when a fake ID is among the IDs.
std::vector<PodGpu> MapPodGpus(const std::vector<std::string>& kubelet_gpu_ids,
                               const std::vector<NvidiaGpu>& driver_gpus, std::string_view ack_mem_idx);

}  // namespace cni

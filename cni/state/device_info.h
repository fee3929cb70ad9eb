// The NPWG Device Information Spec's file for the attachment, which Multus copies into the pod's annotations
// (docs/config.md). Journaled before it is created; whatever undoes the attachment removes it while it is
// still the file ADD wrote (docs/security.md).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "conf/config.h"

namespace cni {

class JsonFields;

/// The capability, and runtimeConfig's key for the file's path.
inline constexpr const char* kDeviceInfoCapability = "CNIDeviceInfoFile";
/// The directory Multus keeps the files of CNI plugins in (/var/run is /run).
inline constexpr const char* kDeviceInfoDir = "/run/k8s.cni.cncf.io/devinfo/cni/";
/// The most a record of ours takes (its text is a PCI address and an RDMA device name).
inline constexpr size_t kMaxDeviceInfoBytes = 4096;

/// The file as the state journals it ("deviceInfo"): where and what ADD writes, and once it wrote it, which
/// file it is (device and inode; 0 when ADD died between the write and the state's).
struct DeviceInfoFile {
  std::string path;
  std::string text;
  uint64_t dev = 0, ino = 0;
};
void Fields(JsonFields& f, DeviceInfoFile& d);

/// The file's text: the spec's "pci" record (1.1.0) of the device at `pci` with RDMA device `rdma`.
std::string DeviceInfoText(const std::string& pci, const std::string& rdma);

/// The path runtimeConfig.CNIDeviceInfoFile names, when it is a file directly in kDeviceInfoDir; nullopt when
/// the runtime gave none, or (logged) another path.
std::optional<std::string> DeviceInfoPath(const conf::Config& cfg);

/// After the attachment's last step: puts `file` in `*slot`, journals it (`persist`), then creates it,
/// exclusively and without following a symlink, and records its identity. What could not be written (a file
/// already there) is logged and leaves `*slot` empty. Errors: `persist`'s only.
base::Status WriteDeviceInfo(std::optional<DeviceInfoFile>& slot, DeviceInfoFile file,
                             const std::function<base::Status()>& persist);

/// Removes the file while it is the one ADD wrote: the same file (device and inode, when known) holding the
/// same text. A file that is gone, was replaced, or cannot be reached without a symlink is left (logged).
/// Errors: only an unlink of our own file that failed (kIo): the DEL is retried.
base::Status RemoveDeviceInfo(const std::optional<DeviceInfoFile>& file);

/// kState naming the field unless `file` is in kDeviceInfoDir and its text at most kMaxDeviceInfoBytes.
base::Status ValidateDeviceInfo(const DeviceInfoFile& file);

}  // namespace cni

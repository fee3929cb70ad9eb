// The NPWG Device Information Spec's file for the attachment: Multus passes
// its path to a plugin that declares the CNIDeviceInfoFile capability and
// copies its content into the pod's network-status annotation, so that the
// pod can tell which HCA is which.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "conf/config.h"

namespace cni {

/// The capability, and runtimeConfig's key for the file's path.
inline constexpr const char* kDeviceInfoCapability = "CNIDeviceInfoFile";
/// The directory Multus keeps the files of CNI plugins in (/var/run is /run).
inline constexpr const char* kDeviceInfoDir = "/run/k8s.cni.cncf.io/devinfo/cni/";

/// The spec's "pci" record (version 1.1.0) for the first interface of
/// `result` that carries a pciID, with its rdmaDevice; nullopt when none does.
std::optional<nlohmann::json> DeviceInfoOf(const nlohmann::json& result);

/// After a successful ADD: writes DeviceInfoOf(result) to the path in
/// runtimeConfig.CNIDeviceInfoFile, when the runtime gave one, it names a
/// file directly in kDeviceInfoDir, and no file is there yet (a device
/// plugin's, which Multus copied, is never touched). Best effort: what it
/// could not do is logged, never an error of the ADD.
void WriteDeviceInfo(const conf::Config& cfg, const nlohmann::json& result);

}  // namespace cni

#include "cni/command/device_info.h"

#include <unistd.h>

#include <cerrno>

#include "base/log.h"
#include "base/path_open.h"
#include "conf/names.h"

namespace cni {

using nlohmann::json;

std::optional<json> DeviceInfoOf(const json& result) {
  auto ifaces = result.find("interfaces");
  if (ifaces == result.end() || !ifaces->is_array()) return std::nullopt;
  for (const json& i : *ifaces) {
    auto pci = i.find("pciID");
    if (!i.is_object() || pci == i.end() || !pci->is_string()) continue;
    json record{{"pci-address", *pci}};
    if (auto rdma = i.find("rdmaDevice"); rdma != i.end() && rdma->is_string()) record["rdma-device"] = *rdma;
    return json{{"type", "pci"}, {"version", "1.1.0"}, {"pci", record}};
  }
  return std::nullopt;
}

void WriteDeviceInfo(const conf::Config& cfg, const json& result) {
  auto given = cfg.runtime_config.find(kDeviceInfoCapability);
  if (given == cfg.runtime_config.end() || !given->is_string()) return;
  std::string path = given->get<std::string>();
  if (path.starts_with("/var/run/")) path.erase(0, 4);
  const std::string dir = kDeviceInfoDir;
  const std::string name = path.starts_with(dir) ? path.substr(dir.size()) : "";
  if (!conf::IsPlainFileName(name)) {
    base::Log::Warn(std::string("runtimeConfig.") + kDeviceInfoCapability + ": " +
                    json(given->get<std::string>()).dump(-1, ' ', true, json::error_handler_t::replace) +
                    " is no file directly in " + dir + "; no device information written");
    return;
  }
  const std::optional<json> info = DeviceInfoOf(result);
  if (!info) return;
  auto fd = base::OpenNoSymlinks(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (!fd.ok()) {
    if (fd.error().sys_errno != EEXIST)
      base::Log::Warn("device information " + path + " not written: " + fd.error().msg);
    return;
  }
  const std::string text = info->dump() + "\n";
  if (::write(fd->get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    base::Log::Warn("device information " + path + " not written whole");
}

}  // namespace cni

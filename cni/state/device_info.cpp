#include "cni/state/device_info.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file.h"
#include "base/log.h"
#include "base/path_open.h"
#include "cni/core/json_fields.h"
#include "cni/core/step_env.h"
#include "conf/names.h"

namespace cni {

using base::Status;
using nlohmann::json;

namespace {

// The name of `path` in kDeviceInfoDir, "" when it is no plain file name directly there.
std::string NameInDir(const std::string& path) {
  const std::string dir = kDeviceInfoDir;
  if (!path.starts_with(dir)) return "";
  std::string name = path.substr(dir.size());
  return conf::IsPlainFileName(name) ? name : "";
}

std::string Shown(const std::string& s) {
  return json(s).dump(-1, ' ', true, json::error_handler_t::replace);
}

}  // namespace

void Fields(JsonFields& f, DeviceInfoFile& d) {
  f("path", d.path)("text", d.text)("dev", d.dev)("ino", d.ino);
}

std::string DeviceInfoText(const std::string& pci, const std::string& rdma) {
  json record{{"pci-address", pci}};
  if (!rdma.empty()) record["rdma-device"] = rdma;
  return json{{"type", "pci"}, {"version", "1.1.0"}, {"pci", record}}.dump() + "\n";
}

std::optional<std::string> DeviceInfoPath(const conf::Config& cfg) {
  auto given = cfg.runtime_config.find(kDeviceInfoCapability);
  if (given == cfg.runtime_config.end() || !given->is_string()) return std::nullopt;
  std::string path = given->get<std::string>();
  if (path.starts_with("/var/run/")) path.erase(0, 4);
  if (NameInDir(path).empty()) {
    base::Log::Warn(std::string("runtimeConfig.") + kDeviceInfoCapability + ": " +
                    Shown(base::Cut(given->get<std::string>(), 256)) + " is no file directly in " +
                    kDeviceInfoDir + "; no device information written");
    return std::nullopt;
  }
  return path;
}

Status WriteDeviceInfo(std::optional<DeviceInfoFile>& slot, DeviceInfoFile file,
                       const std::function<Status()>& persist) {
  const std::string path = file.path;
  slot = std::move(file);
  if (Status s = persist(); !s.ok()) {
    slot.reset();
    return s;
  }
  auto fd = base::OpenNoSymlinks(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
  if (!fd.ok()) {
    base::Log::Warn(
        "device information " + path + " not written: " +
        (fd.error().sys_errno == EEXIST
             ? std::string("a file is there already (a device plugin's, or another attachment's); "
                           "it is left as it is")
             : fd.error().msg));
    slot.reset();
    return base::Ok();
  }
  struct stat st {};
  Status w = base::WriteAll(fd->get(), slot->text, path);
  if (w.ok() && ::fstat(fd->get(), &st) != 0) w = base::SysError("stat " + path, errno);
  if (!w.ok()) {
    // Ours, half written: it goes again, and nothing of it is journaled.
    base::Log::Warn("device information " + path + " not written: " + w.error().msg);
    (void)::unlink(path.c_str());
    slot.reset();
    return base::Ok();
  }
  slot->dev = st.st_dev;
  slot->ino = st.st_ino;
  base::Log::Debug("device information written to " + path);
  return base::Ok();
}

Status RemoveDeviceInfo(const std::optional<DeviceInfoFile>& file) {
  if (!file) return base::Ok();
  const std::string& path = file->path;
  const std::string name = NameInDir(path);
  auto leave = [&path](const std::string& why) {
    base::Log::Warn("device information " + path + " left as it is: " + why);
    return base::Ok();
  };
  if (name.empty()) return leave("no file directly in " + std::string(kDeviceInfoDir));
  std::string dir_path = kDeviceInfoDir;
  dir_path.pop_back();
  auto dir = base::OpenNoSymlinks(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!dir.ok()) return dir.error().sys_errno == ENOENT ? base::Ok() : leave(dir.error().msg);
  auto fd = base::OpenNoSymlinks(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0, dir->get());
  if (!fd.ok()) return fd.error().sys_errno == ENOENT ? base::Ok() : leave(fd.error().msg);
  struct stat mine {};
  if (::fstat(fd->get(), &mine) != 0) return leave(std::string("stat: ") + std::strerror(errno));
  if (!S_ISREG(mine.st_mode)) return leave("not a regular file");
  if (file->ino != 0 && (mine.st_dev != file->dev || mine.st_ino != file->ino))
    return leave("another file than the one ADD wrote is there now");
  auto text = base::ReadRest(fd->get(), path, kMaxDeviceInfoBytes);
  if (!text.ok() || *text != file->text) return leave("it no longer holds what ADD wrote");
  struct stat there {};
  if (::fstatat(dir->get(), name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? base::Ok() : leave(std::string("stat: ") + std::strerror(errno));
  if (there.st_dev != mine.st_dev || there.st_ino != mine.st_ino)
    return leave("another file than the one ADD wrote is there now");
  if (::unlinkat(dir->get(), name.c_str(), 0) != 0 && errno != ENOENT)
    return base::SysError("unlink the device information " + path, errno);
  base::Log::Debug("device information " + path + " removed");
  return base::Ok();
}

Status ValidateDeviceInfo(const DeviceInfoFile& file) {
  if (NameInDir(file.path).empty())
    return BadValue("deviceInfo.path", file.path, std::string("a file directly in ") + kDeviceInfoDir);
  if (file.text.size() > kMaxDeviceInfoBytes)
    return BadValue("deviceInfo.text", base::Cut(file.text, 64),
                    "a record of at most " + std::to_string(kMaxDeviceInfoBytes) + " bytes");
  return base::Ok();
}

}  // namespace cni

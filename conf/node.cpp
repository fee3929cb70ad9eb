#include "conf/node.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "base/file.h"
#include "base/json_parse.h"
#include "base/path_open.h"
#include "conf/names.h"

namespace conf {

using base::Code;
using base::Error;
using nlohmann::json;

namespace {

// "/a//b/./c/" -> "/a/b/c"; "/" -> "". Entries and values are compared in
// this form, so "/run/erdma-cni/" as a dataDir is the entry "/run/erdma-cni".
std::string Normalize(std::string_view p) {
  std::string out;
  for (std::string_view part : Split(p, '/'))
    if (!part.empty() && part != ".") out.append("/").append(part);
  return out;
}

// Whether one of the directories `a` and `b` is the other or below it.
bool Overlap(std::string_view a, std::string_view b) {
  const std::string x = Normalize(a), y = Normalize(b);
  return x == y || x.starts_with(y + "/") || y.starts_with(x + "/") || x.empty() || y.empty();
}

bool ValidEntry(const std::string& e) {
  if (!IsSafeAbsolutePath(e)) return false;
  // "." parts would make an entry mean something else than it reads.
  return e.find("/./") == std::string::npos && !e.ends_with("/.");
}

base::Status ReadList(const json& root, const char* key, const std::string& path, bool paths,
                      std::vector<std::string>* out) {
  auto it = root.find(key);
  if (it == root.end()) return base::Ok();
  const std::string fix =
      paths ? "absolute paths; one ending in \"/\" allows everything below it" : "node device names";
  if (!it->is_array()) return Error(Code::kInvalidConfig, path + ": " + key + " must be an array of " + fix);
  out->clear();
  for (const json& v : *it) {
    if (!v.is_string()) return Error(Code::kInvalidConfig, path + ": " + key + " must be an array of " + fix);
    const auto& s = v.get_ref<const std::string&>();
    if (paths ? !ValidEntry(s) : !IsValidIfName(s))
      return Error(Code::kInvalidConfig, path + ": " + key + ": " +
                                             json(s).dump(-1, ' ', true, json::error_handler_t::replace) +
                                             " is not valid; use " + fix + " (no \".\" or \"..\" parts)");
    out->push_back(s);
  }
  return base::Ok();
}

}  // namespace

std::optional<uint64_t> ParseMemlock(std::string_view value) {
  if (value == "unlimited") return UINT64_MAX;
  uint64_t n = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, n);
  if (ec != std::errc() || p == value.data()) return std::nullopt;
  const std::string_view unit(p, static_cast<size_t>(end - p));
  const int shift = unit == "Ki" ? 10 : unit == "Mi" ? 20 : unit == "Gi" ? 30 : 0;
  if (shift == 0 && !unit.empty()) return std::nullopt;
  if (shift && n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

base::Result<NodePolicy> ParseNodePolicy(std::string_view text, const std::string& path) {
  ASSIGN_OR_RETURN(json root, base::ParseJson(text, "node file " + path));
  if (!root.is_object()) return Error(Code::kInvalidConfig, path + ": must be a JSON object");
  for (const auto& [k, v] : root.items()) {
    (void)v;
    if (k != "dataDirs" && k != "logFiles" && k != "allowNodeDevices" && k != "podResourcesSocket" &&
        k != "attachmentsDir" && k != "nriMemlock")
      return Error(Code::kInvalidConfig,
                   path + ": unknown key " + json(k).dump(-1, ' ', true, json::error_handler_t::replace) +
                       "; the keys are dataDirs, logFiles, allowNodeDevices, podResourcesSocket, "
                       "attachmentsDir and nriMemlock (docs/security.md)");
  }
  NodePolicy p;
  p.source = path;
  RETURN_IF_ERROR(ReadList(root, "dataDirs", path, true, &p.data_dirs));
  RETURN_IF_ERROR(ReadList(root, "logFiles", path, true, &p.log_files));
  RETURN_IF_ERROR(ReadList(root, "allowNodeDevices", path, false, &p.allow_node_devices));
  if (root.contains("podResourcesSocket")) {
    const json& v = root["podResourcesSocket"];
    if (!v.is_string() || v.get_ref<const std::string&>().empty() ||
        v.get_ref<const std::string&>()[0] != '/' || v.get_ref<const std::string&>().size() >= 108)
      return Error(Code::kInvalidConfig,
                   path +
                       ": podResourcesSocket must be the absolute path of the kubelet's pod-resources "
                       "socket (at most 107 bytes), e.g. /var/lib/kubelet/pod-resources/kubelet.sock");
    p.pod_resources_socket = v.get<std::string>();
  }
  if (root.contains("attachmentsDir")) {
    const json& v = root["attachmentsDir"];
    if (!v.is_string() || !ValidEntry(v.get_ref<const std::string&>()) ||
        v.get_ref<const std::string&>().ends_with("/") || v.get_ref<const std::string&>() == "/")
      return Error(Code::kInvalidConfig,
                   path +
                       ": attachmentsDir must be the absolute path of a directory (no \".\" or \"..\" "
                       "parts, no trailing \"/\"), e.g. " +
                       kAttachmentsDir);
    p.attachments_dir = v.get<std::string>();
  }
  if (root.contains("nriMemlock")) {
    const json& v = root["nriMemlock"];
    p.nri_memlock = v.is_string() ? ParseMemlock(v.get_ref<const std::string&>()) : std::nullopt;
    if (!p.nri_memlock)
      return Error(Code::kInvalidConfig, path +
                                             ": nriMemlock must be a string: bytes with an optional Ki, Mi "
                                             "or Gi suffix, or \"unlimited\" (e.g. \"unlimited\", \"64Gi\")");
  }
  // A dataDir's entries may be any network's name: the records live apart from every one of them. An exact
  // entry that overlaps them is refused here; a config's dataDir below an entry ending in "/", by
  // CheckNodePaths.
  for (const std::string& d : p.data_dirs)
    if (!d.ends_with("/") && Overlap(d, p.attachments_dir))
      return Error(Code::kInvalidConfig,
                   path + ": attachmentsDir " + p.attachments_dir + " overlaps the dataDirs entry " + d +
                       "; give attachmentsDir a directory of its own, e.g. " + kAttachmentsDir);
  return p;
}

base::Result<NodePolicy> LoadNodePolicy(const char* env_path) {
  const bool from_env = env_path != nullptr && *env_path != '\0';
  const std::string path = from_env ? env_path : kNodeConfigPath;
  if (path[0] != '/')
    return Error(Code::kIo, std::string(kNodeConfigEnv) + "=" + path + " must be an absolute path");
  auto fd = base::OpenNoSymlinks(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!fd.ok()) {
    if (fd.error().sys_errno == ENOENT && !from_env) return NodePolicy{};
    Error e = fd.error();
    e.msg = "node file (" + std::string(from_env ? kNodeConfigEnv : "default path") + "): " + e.msg;
    return e;
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0)
    return Error(Code::kIo, "node file " + path + ": fstat failed", "", errno);
  if (!S_ISREG(st.st_mode)) return Error(Code::kIo, "node file " + path + " is not a regular file");
  // Root alone decides what root may touch.
  if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return Error(Code::kIo, "node file " + path +
                                " must be owned by root and not writable by group or others (" +
                                "owner uid " + std::to_string(st.st_uid) + ", mode " +
                                std::to_string((st.st_mode >> 6) & 7) +
                                std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                                "); fix: chown root " + path + " && chmod 0644 " + path);
  if (static_cast<uint64_t>(st.st_size) > kMaxNodeConfigBytes)
    return Error(Code::kIo,
                 "node file " + path + " is larger than " + std::to_string(kMaxNodeConfigBytes) + " bytes");
  // Read as it is long: a buffer of the largest size allowed would be
  // zeroed and faulted in by every invocation (docs/performance.md).
  auto text = base::ReadRest(fd->get(), path, kMaxNodeConfigBytes);
  if (!text.ok()) {
    Error e = std::move(text).error();
    e.code = Code::kIo;
    return std::move(e).WithContext("node file");
  }
  return ParseNodePolicy(*text, path);
}

bool PathAllowed(const std::vector<std::string>& entries, std::string_view path) {
  const std::string p = Normalize(path);
  for (const std::string& e : entries) {
    const std::string n = Normalize(e);
    if (e.ends_with("/")) {
      if (p.size() > n.size() && p.starts_with(n) && p[n.size()] == '/') return true;
    } else if (p == n) {
      return true;
    }
  }
  return false;
}

base::Status CheckNodePaths(const Config& cfg, const NodePolicy& policy) {
  auto refuse = [&](const char* key, const std::string& value, const char* node_key) {
    return Error(Code::kInvalidConfig,
                 std::string(key) + ": " + json(value).dump(-1, ' ', true, json::error_handler_t::replace) +
                     " is not allowed on this node (" + policy.source +
                     "); the node admin allows it by adding it to " + node_key + " in the node file (" +
                     kNodeConfigPath + " or $" + kNodeConfigEnv + ", docs/security.md)");
  };
  if (!PathAllowed(policy.data_dirs, cfg.data_dir)) return refuse("dataDir", cfg.data_dir, "dataDirs");
  if (Overlap(cfg.data_dir, policy.attachments_dir))
    return Error(Code::kInvalidConfig,
                 "dataDir: " + json(cfg.data_dir).dump(-1, ' ', true, json::error_handler_t::replace) +
                     " overlaps the node's attachmentsDir " + policy.attachments_dir + " (" + policy.source +
                     "), where erdma-cni records every attachment; choose another dataDir");
  if (!cfg.log_file.empty() && !PathAllowed(policy.log_files, cfg.log_file))
    return refuse("logFile", cfg.log_file, "logFiles");
  return base::Ok();
}

}  // namespace conf

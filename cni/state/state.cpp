#include "cni/state/state.h"

#include <cerrno>
#include <limits>
#include <utility>

#include "base/fault.h"
#include "base/file.h"
#include "base/json_parse.h"
#include "base/phase.h"
#include "cni/state/claim.h"
#include "cni/state/state_check.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

void Fields(JsonFields& f, DeviceOrigin& o) {
  f("name", o.name)("index", o.index)("mac", o.mac)("mtu", o.mtu)("up", o.up)("kind", o.kind);
  f("addrs", o.addrs)("routes", o.routes);
}

}  // namespace cni

namespace netlink {
// The pod netns's identity (in namespace netlink, where the lookup of the nested record's Fields finds it).
void Fields(cni::JsonFields& f, NetnsId& id) {
  f("dev", id.dev)("ino", id.ino);
  // The cookie: absent when the kernel had none (before Linux 5.14).
  if (f.Has("cookie", id.cookie != 0)) f("cookie", id.cookie);
  if (f.reading() && f.status().ok() && id.ino == 0) f.Refuse("\"netnsId\" has inode 0");
}
}  // namespace netlink

namespace cni {

// Everything but the steps and the result.
void Fields(JsonFields& f, AttachmentState& s) {
  f("network", s.network)("containerID", s.container_id)("ifName", s.if_name)("netns", s.netns);
  f("netnsId", s.netns_id);
  f("podIfName", s.pod_if_name)("table", s.table)("rdmaDevice", s.rdma_device)("rdmaMode", s.rdma_mode);
  f("device", s.origin)("complete", s.complete);
  if (f.Has("group", s.group)) f("group", s.group);
  f("memberOf", s.member_of);
  f("deviceInfo", s.device_info);
}

namespace {

// "<name>.tmp.<pid>": a write in flight (base::WriteFileAtomic).
bool IsTempName(const std::string& n) {
  const size_t dot = n.rfind(".tmp.");
  if (dot == std::string::npos || dot + 5 == n.size()) return false;
  return n.find_first_not_of("0123456789", dot + 5) == std::string::npos;
}

}  // namespace

std::string StateText(const AttachmentState& s) {
  // Text straight from the records, no tree (docs/decisions/json-text-sink.md).
  return JsonFields::Text([&s](JsonFields& f) {
    uint32_t format = AttachmentState::kFormat;
    f("format", format);
    Fields(f, const_cast<AttachmentState&>(s));  // writing reads it only
    f.Records("steps", s.steps.size(), [&s](JsonFields& step, size_t i) { StepFields(step, s.steps[i]); });
    f("result", const_cast<json&>(s.result));
  });
}

Result<AttachmentState> StateFromJson(const json& j) {
  AttachmentState s;
  JsonFields f(j);
  uint32_t format = 0;
  f("format", format);
  if (f.status().ok() && format != AttachmentState::kFormat)
    f.Refuse("format " + std::to_string(format) + " is not supported by this erdma-cni");
  Fields(f, s);
  const json* steps = f.In("steps");
  if (steps && !steps->is_array()) f.Refuse("\"steps\" must be an array");
  RETURN_IF_ERROR(f.status());
  for (const auto& st : *steps) {
    ASSIGN_OR_RETURN(Step step, StepFromJson(st));
    s.steps.push_back(std::move(step));
  }
  if (j.contains("result")) s.result = j["result"];
  return s;
}

bool ForEachState(const std::string& data_dir,
                  const std::function<bool(const StateStore&, const std::string& path)>& each,
                  const std::function<void(const Error&)>& refused) {
  auto networks = base::ListDirs(data_dir);
  if (!networks.ok()) return true;
  for (const auto& net : *networks) {
    if (conf::IsReservedDataDirName(net)) continue;
    StateStore store(data_dir, net);
    if (auto safe = refused ? store.Check() : base::Ok(); !safe.ok()) {
      refused(safe.error());
      continue;
    }
    auto paths = store.List();
    if (!paths.ok()) continue;
    for (const auto& path : *paths)
      if (each(store, path)) return true;
  }
  return false;
}

bool UeidUsedElsewhere(const StateStore& store, const std::string& self, const std::string& ueid) {
  // A dataDir that cannot be listed leaves us unsure: keep it.
  return ForEachState(store.DataDir(), [&](const StateStore& other, const std::string& p) {
    if (p == self) return false;
    auto st = other.Load(p);
    if (!st.ok() || !*st) return false;
    for (const auto& step : (*st)->steps)
      if (const auto* u = std::get_if<StepUeid>(&step); u && u->ueid == ueid) return true;
    return false;
  });
}

std::string StateStore::FileName(const std::string& container_id, const std::string& if_name) {
  std::string name = "@" + container_id + "@";
  for (char c : if_name) {
    // '.' escaped too: no name can end in ".tmp.<pid>" or ".unreadable", which List() leaves out.
    if (c == '%')
      name += "%25";
    else if (c == '.')
      name += "%2e";
    else
      name += c;
  }
  return name;
}

Result<std::optional<AttachmentState>> StateStore::LoadLocated(const std::string& container_id,
                                                               const std::string& if_name,
                                                               std::string* path) const {
  *path = PathFor(container_id, if_name);
  auto found = Load(*path);
  if (!found.ok() || *found) return found;
  const std::string legacy = Dir() + "/" + LegacyFileName(container_id, if_name);
  auto old = Load(legacy);
  if (old.ok()) {
    const std::optional<AttachmentState>& st = *old;
    if (!st || st->container_id != container_id || st->if_name != if_name) return found;
  } else {
    // Unreadable: ours only when our device claim names it and this attachment.
    auto owner = ClaimOf(DevicesDir(), legacy);
    if (!owner || owner->container_id != container_id || owner->if_name != if_name) return found;
  }
  *path = legacy;
  return old;
}

Status StateStore::Prepare() const {
  const base::phase::Scope phase("state-dir");
  // All checked before any is made: a bad one leaves nothing behind.
  RETURN_IF_ERROR(Check());
  RETURN_IF_ERROR(base::EnsurePrivateDirs(data_dir_));
  RETURN_IF_ERROR(base::EnsurePrivateDirs(Dir()));
  RETURN_IF_ERROR(base::EnsurePrivateDirs(DevicesDir()));
  return EnsureClaimIndex(DevicesDir());
}

Status StateStore::Check() const {
  const base::phase::Scope phase("state-dir");
  for (const std::string& dir : {data_dir_, Dir(), DevicesDir(), ChildrenDir()})
    RETURN_IF_ERROR(base::CheckPrivateDir(dir));
  return base::Ok();
}

Result<std::optional<AttachmentState>> StateStore::Load(const std::string& path) const {
  const base::phase::Scope phase("state-read");
  auto text = base::ReadFileNoFollow(path, kMaxStateBytes);
  if (!text.ok()) {
    if (text.error().sys_errno == ENOENT || text.error().sys_errno == ENOTDIR)
      return std::optional<AttachmentState>();
    Error e = std::move(text).error();
    e.code = Code::kState;
    return e;
  }
  const std::string fix = "; remove the file if no pod uses this attachment";
  auto j = base::ParseJson(*text, "state file " + path);
  if (!j.ok()) return Error(Code::kState, j.error().msg + " (truncated or corrupt)" + fix);
  auto s = StateFromJson(*j);
  Status valid = s.ok() ? ValidateState(*s) : Status(s.error());
  if (!valid.ok()) {
    Error e = std::move(valid).error().WithContext("state file " + path);
    e.msg += fix;
    if (s.ok()) e.sys_errno = kHostileState;
    return e;
  }
  const std::string name = path.substr(path.rfind('/') + 1);
  const bool named_right = s->group ? name == GroupFileName(s->container_id, s->if_name)
                                    : name == FileName(s->container_id, s->if_name) ||
                                          name == LegacyFileName(s->container_id, s->if_name);
  if (s->network != network_ || !named_right)
    return Error(Code::kState,
                 "state file " + path + " holds the attachment " + s->container_id + "/" + s->if_name +
                     " of network " + s->network + ", not the one its name and directory say" + fix,
                 "", kHostileState);
  return std::optional<AttachmentState>(std::move(s).value());
}

Status StateStore::Save(const std::string& path, const AttachmentState& s) const {
  const base::phase::Scope phase("state-write");
  RETURN_IF_ERROR(base::fault::Point("before", "state-write"));
  // One validator for what is written and read: ADD never records a state DEL could not read back.
  if (Status valid = ValidateState(s); !valid.ok())
    return Error(valid.error().code,
                 "refusing to record what no DEL could read back: " + valid.error().msg +
                     " (text from the node, the kubelet or an IPAM plugin that erdma-cni cannot journal)",
                 valid.error().details);
  std::string text = StateText(s);
  // Likewise a state larger than DEL reads.
  if (text.size() > kMaxStateBytes)
    return Error(Code::kState, "the state of attachment " + s.container_id + "/" + s.if_name + " would be " +
                                   std::to_string(text.size()) + " bytes, more than the " +
                                   std::to_string(kMaxStateBytes) +
                                   " erdma-cni reads back (a device with that many addresses and routes, or "
                                   "an IPAM result that large, cannot be attached)");
  Status written = base::WriteFileAtomic(path, text);
  // The DEL of this network's last attachment may have removed the directory since Prepare.
  if (!written.ok() && written.error().sys_errno == ENOENT && base::MakePrivateDirs(Dir()).ok())
    written = base::WriteFileAtomic(path, text);
  RETURN_IF_ERROR(std::move(written));
  return base::fault::Point("after", "state-write");
}

Status StateStore::Remove(const std::string& path) const {
  const base::phase::Scope phase("state-remove");
  RETURN_IF_ERROR(base::fault::Point("before", "state-remove"));
  RETURN_IF_ERROR(base::RemoveFile(path));
  if (path.starts_with(Dir() + "/")) base::RemoveDirIfEmpty(Dir());
  // After it, before the claim or share goes: a DEL that dies here leaves a claim naming a missing state.
  return base::fault::Point("after", "state-remove");
}

Result<std::vector<std::string>> StateStore::List() const {
  ASSIGN_OR_RETURN(auto names, base::ListFiles(Dir()));
  std::vector<std::string> paths;
  for (const auto& n : names) {
    if (IsTempName(n) || n.ends_with(".unreadable")) continue;
    paths.push_back(Dir() + "/" + n);
  }
  return paths;
}

}  // namespace cni

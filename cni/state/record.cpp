#include "cni/state/record.h"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using nlohmann::json;

namespace {

std::string RecordPath(const std::string& dir, const std::string& container_id, const std::string& if_name) {
  return dir + "/" + StateStore::FileName(container_id, if_name);
}

Result<std::optional<RecordPlace>> ReadLocked(const base::FileLock& lock, const std::string& container_id,
                                              const std::string& if_name) {
  if (::lseek(lock.fd(), 0, SEEK_SET) != 0) return base::SysError("seek " + lock.path(), errno);
  ASSIGN_OR_RETURN(std::string text, base::ReadAll(lock.fd(), lock.path(), kMaxRecordBytes));
  return ParseRecord(text, lock.path(), container_id, if_name);
}

}  // namespace

bool PlaceHoldsState(const RecordPlace& place, const std::string& container_id, const std::string& if_name,
                     bool if_unsure) {
  const StateStore store(place.data_dir, place.network);
  for (const std::string& p : store.PathsOf(container_id, if_name)) {
    auto found = base::Exists(p);
    if (!found.ok()) return if_unsure;
    if (*found) return true;
  }
  return false;
}

Result<std::optional<RecordPlace>> ParseRecord(const std::string& text, const std::string& path,
                                               const std::string& container_id, const std::string& if_name) {
  if (text.empty()) return std::optional<RecordPlace>();
  const std::string fix = "; remove " + path + " if no pod uses this attachment (docs/reliability.md)";
  auto j = base::ParseJson(text, "attachment record " + path);
  if (!j.ok()) return Error(Code::kState, j.error().msg + fix);
  auto text_of = [&](const char* key) -> const std::string* {
    auto it = j->find(key);
    return it != j->end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
  };
  const std::string *cid = text_of("containerID"), *ifn = text_of("ifName"), *dir = text_of("dataDir"),
                    *net = text_of("network");
  if (!j->is_object() || j->size() != 4 || !cid || !ifn || !dir || !net)
    return Error(Code::kState,
                 "attachment record " + path +
                     " must be an object of the strings containerID, ifName, dataDir and network" + fix);
  if (*cid != container_id || *ifn != if_name)
    return Error(Code::kState, "attachment record " + path + " names another attachment" + fix);
  if (!conf::IsSafeAbsolutePath(*dir) || !conf::IsPlainFileName(*net, conf::kMaxNetworkNameBytes) ||
      conf::IsReservedDataDirName(*net))
    return Error(Code::kState,
                 "attachment record " + path + " names a dataDir or network no config can have" + fix);
  return std::optional<RecordPlace>(RecordPlace{*dir, *net});
}

Result<AttachmentRecord> AttachmentRecord::Begin(const std::string& dir, const std::string& container_id,
                                                 const std::string& if_name, const RecordPlace& place,
                                                 int wait_ms) {
  RETURN_IF_ERROR(base::MakePrivateDirs(dir));
  ASSIGN_OR_RETURN(base::FileLock lock,
                   base::FileLock::Acquire(RecordPath(dir, container_id, if_name), wait_ms));
  auto old = ReadLocked(lock, container_id, if_name);
  // A record naming another place that still holds this attachment: the runtime reused the key.
  if (old.ok() && *old && **old != place && PlaceHoldsState(**old, container_id, if_name, false))
    return Error(Code::kTryAgainLater, "attachment " + container_id + "/" + if_name +
                                           " already exists in network " + (*old)->network + " of dataDir " +
                                           (*old)->data_dir + " (" + lock.path() + "); run DEL for it first");
  // Anything else is this ADD's now: an unreadable record, or one whose state is gone, is replaced.
  const std::string text = json{{"containerID", container_id},
                                {"ifName", if_name},
                                {"dataDir", place.data_dir},
                                {"network", place.network}}
                               .dump() +
                           "\n";
  if (::lseek(lock.fd(), 0, SEEK_SET) != 0 || ::ftruncate(lock.fd(), 0) != 0)
    return base::SysError("truncate " + lock.path(), errno);
  RETURN_IF_ERROR(base::WriteAll(lock.fd(), text, lock.path()));
  return AttachmentRecord(std::move(lock), place);
}

Result<std::optional<AttachmentRecord>> AttachmentRecord::Find(const std::string& dir,
                                                               const std::string& container_id,
                                                               const std::string& if_name, int wait_ms) {
  const std::string path = RecordPath(dir, container_id, if_name);
  auto there = base::Exists(path);
  if (!there.ok())
    return std::move(there).error().WithContext("looking for the record of attachment " + container_id + "/" +
                                                if_name + " (attachmentsDir in the node file)");
  if (!*there) return std::optional<AttachmentRecord>();
  ASSIGN_OR_RETURN(base::FileLock lock, base::FileLock::Acquire(path, wait_ms));
  ASSIGN_OR_RETURN(auto place, ReadLocked(lock, container_id, if_name));
  return std::optional<AttachmentRecord>(AttachmentRecord(std::move(lock), std::move(place)));
}

Result<AttachmentRecord> AttachmentRecord::TryLock(const std::string& dir, const std::string& container_id,
                                                   const std::string& if_name) {
  RETURN_IF_ERROR(base::MakePrivateDirs(dir));
  ASSIGN_OR_RETURN(base::FileLock lock, base::FileLock::Acquire(RecordPath(dir, container_id, if_name), 0));
  auto place = ReadLocked(lock, container_id, if_name);
  // Unreadable: nothing this lock's holder relies on (RemoveIfAt keeps it).
  if (!place.ok()) return AttachmentRecord(std::move(lock), RecordPlace{"?", "?"});
  return AttachmentRecord(std::move(lock), std::move(*place));
}

std::vector<FoundRecord> RecordsOf(const std::string& dir, const std::string& container_id) {
  std::vector<FoundRecord> found;
  auto names = base::ListFiles(dir);
  if (!names.ok()) return found;
  const std::string prefix = "@" + container_id + "@";
  for (const std::string& name : *names) {
    if (!name.starts_with(prefix)) continue;
    const std::string path = dir + "/" + name;
    auto text = base::ReadFileNoFollow(path, kMaxRecordBytes);
    if (!text.ok() || text->empty()) continue;
    auto j = base::ParseJson(*text, path);
    if (!j.ok() || !j->is_object() || !j->contains("ifName") || !(*j)["ifName"].is_string()) continue;
    const std::string if_name = (*j)["ifName"].get<std::string>();
    auto place = ParseRecord(*text, path, container_id, if_name);
    if (place.ok() && *place && path == RecordPath(dir, container_id, if_name))
      found.push_back({if_name, **place});
  }
  return found;
}

void DropRecord(const std::string& dir, const std::string& container_id, const std::string& if_name,
                const RecordPlace& place) {
  auto there = base::Exists(RecordPath(dir, container_id, if_name));
  if (!there.ok() || !*there || PlaceHoldsState(place, container_id, if_name, true)) return;
  auto record = AttachmentRecord::TryLock(dir, container_id, if_name);
  if (record.ok()) record->RemoveIfAt(place);
}

}  // namespace cni

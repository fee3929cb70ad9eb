// Attachment records, <attachmentsDir>/<StateStore::FileName(containerID, ifName)> holding {"containerID",
// "ifName", "dataDir", "network"} (empty: a lock with nothing recorded yet): where DEL finds the state
// whatever the config says by then, and the attachment's lock (docs/architecture.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file.h"

namespace cni {

/// Where an attachment's state is: <dataDir>/<network>/.
struct RecordPlace {
  std::string data_dir;
  std::string network;
  bool operator==(const RecordPlace&) const = default;
};

/// The largest record read back.
inline constexpr size_t kMaxRecordBytes = 8 << 10;

class AttachmentRecord {
 public:
  /// ADD: makes the directory, takes the attachment's lock (waiting at most `wait_ms`) and records `place`.
  /// Code 11 when a record names another place that still holds a state of this attachment.
  static base::Result<AttachmentRecord> Begin(const std::string& dir, const std::string& container_id,
                                              const std::string& if_name, const RecordPlace& place,
                                              int wait_ms);
  /// DEL: the record, locked (waiting at most `wait_ms`); nullopt when there is none (one look, no lock, no
  /// directory made). An error naming the file and the fix when it cannot be looked at or read.
  static base::Result<std::optional<AttachmentRecord>> Find(const std::string& dir,
                                                            const std::string& container_id,
                                                            const std::string& if_name, int wait_ms);
  /// GC and stale recovery: the lock without waiting (code 11 while an ADD or DEL holds it), also when there
  /// is no record (then an empty one, which Release removes).
  static base::Result<AttachmentRecord> TryLock(const std::string& dir, const std::string& container_id,
                                                const std::string& if_name);

  /// What the record says; nullopt for an empty one.
  const std::optional<RecordPlace>& place() const { return place_; }
  const std::string& path() const { return lock_.path(); }
  /// The attachment is gone: removes the record, still holding its lock.
  void Remove() { lock_.Unlink(); }
  /// Removes the record when it names `place` or nothing; leaves another place's.
  void RemoveIfAt(const RecordPlace& place) {
    if (!place_ || *place_ == place) Remove();
  }
  /// Removes the file only when it records nothing (TryLock made it).
  void RemoveIfEmpty() {
    if (!place_) Remove();
  }

 private:
  AttachmentRecord(base::FileLock lock, std::optional<RecordPlace> place)
      : lock_(std::move(lock)), place_(std::move(place)) {}
  base::FileLock lock_;
  std::optional<RecordPlace> place_;
};

/// Whether `place` holds a state of (container_id, if_name) (its own, a group's or an older erdma-cni's
/// name); `if_unsure` when that cannot be told (a directory on the way fails the private check).
bool PlaceHoldsState(const RecordPlace& place, const std::string& container_id, const std::string& if_name,
                     bool if_unsure);

/// After the attachment at `place` was undone by other than its DEL (GC, a stale holder's recovery): its
/// record goes, unless an ADD or DEL holds it, it names another place, or a state of it is still there.
void DropRecord(const std::string& dir, const std::string& container_id, const std::string& if_name,
                const RecordPlace& place);

/// The records of container `container_id` in `dir`, each with its CNI_IFNAME (the unreadable ones left out).
struct FoundRecord {
  std::string if_name;
  RecordPlace place;
};
std::vector<FoundRecord> RecordsOf(const std::string& dir, const std::string& container_id);

/// A record's reading: kState naming `path` and the fix for anything Begin never writes.
base::Result<std::optional<RecordPlace>> ParseRecord(const std::string& text, const std::string& path,
                                                     const std::string& container_id,
                                                     const std::string& if_name);

}  // namespace cni

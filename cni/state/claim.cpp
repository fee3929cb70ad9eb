#include "cni/state/claim.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/fault.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/phase.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using nlohmann::json;

namespace {

constexpr size_t kMaxClaimBytes = 64 << 10;

// A share's file name (an on-disk format): the state file name cut short, and its whole path's FNV-1a hash.
std::string ShareName(const std::string& state_path) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : state_path) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // 16 hex digits, zero-padded; to_chars, not snprintf, whose code no other part of a DEL touches.
  char digits[16];
  const auto n = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, h, 16).ptr - digits);
  std::string base = state_path.substr(state_path.rfind('/') + 1);
  if (base.size() > 64) base.resize(64);
  return base + "." + std::string(16 - n, '0').append(digits, n);
}

// The claims' index (claim.h): a dot keeps it out of claim listings, a colon out of interface names.
constexpr char kIndexDir[] = ".by:id";
constexpr char kIndexBuilt[] = ".built";

std::string IndexDir(const std::string& devices_dir) { return devices_dir + "/" + kIndexDir; }

std::vector<std::string> IndexKeys(const ClaimOwner& o) {
  std::vector<std::string> keys;
  if (!o.mac.empty()) keys.push_back("mac=" + o.mac);
  if (!o.pci.empty()) keys.push_back("pci=" + o.pci);
  if (!o.state_path.empty()) keys.push_back("state=" + ShareName(o.state_path));
  return keys;
}

bool IndexBuilt(const std::string& devices_dir) {
  return base::PathExists(IndexDir(devices_dir) + "/" + kIndexBuilt);
}

std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Why a claim or share read from disk cannot be used ("" = it can): each name is checked as ADD checked it.
std::string BadOwner(const ClaimOwner& o) {
  if (!conf::IsValidContainerId(o.container_id, conf::kMaxLegacyContainerIdBytes)) return "containerID";
  if (!conf::IsPlainFileName(o.network, 128) || conf::IsReservedDataDirName(o.network)) return "network";
  if (!conf::IsValidIfName(o.if_name)) return "ifName";
  // The owner's state: a file directly in <dataDir>/<network>/, nowhere else.
  const std::string dir = "/" + o.network + "/";
  const size_t slash = o.state_path.rfind('/');
  if (!conf::IsSafeAbsolutePath(o.state_path) || slash == std::string::npos || slash < dir.size() - 1 ||
      o.state_path.compare(slash + 1 - dir.size(), dir.size(), dir) != 0 ||
      !conf::IsPlainFileName(o.state_path.substr(slash + 1)))
    return "state";
  if (!conf::IsValidIfName(o.device) && !conf::NormalizePci(o.device)) return "device";
  if (!o.mac.empty() && (!conf::NormalizeMac(o.mac) || o.mac == "00:00:00:00:00:00")) return "mac";
  if (!o.pci.empty() && !conf::NormalizePci(o.pci)) return "pci";
  return "";
}

// The members of a claim's (or a share's) JSON object, by key.
constexpr std::pair<const char*, std::string ClaimOwner::*> kOwnerKeys[] = {
    {"network", &ClaimOwner::network}, {"containerID", &ClaimOwner::container_id},
    {"ifName", &ClaimOwner::if_name},  {"state", &ClaimOwner::state_path},
    {"device", &ClaimOwner::device},   {"mac", &ClaimOwner::mac},
    {"pci", &ClaimOwner::pci}};

std::string OwnerText(const ClaimOwner& o) {
  json j = json::object();
  for (const auto& [key, member] : kOwnerKeys) j[key] = o.*member;
  if (!o.steps.empty()) j["steps"] = o.steps;
  if (o.down) j["down"] = true;
  return j.dump();
}

std::optional<ClaimOwner> ParseOwner(const std::string& text, const std::string& file) {
  if (text.empty()) return std::nullopt;
  auto parsed = base::ParseJson(text, "claim " + file);
  if (!parsed.ok() || !parsed->is_object()) {
    base::Log::Warn("ignoring the claim " + file + ": " +
                    (parsed.ok() ? std::string("not a JSON object") : parsed.error().msg));
    return std::nullopt;
  }
  const json& j = *parsed;
  ClaimOwner o;
  for (const auto& [key, member] : kOwnerKeys)
    if (auto it = j.find(key); it != j.end() && it->is_string()) o.*member = it->get<std::string>();
  if (auto steps = j.find("steps"); steps != j.end() && steps->is_array())
    for (const json& s : *steps) o.steps.push_back(s);
  else if (auto vf = j.find("vf"); vf != j.end() && vf->is_object())  // older builds' form, accepted
    o.steps.push_back(*vf);
  if (auto down = j.find("down"); down != j.end() && down->is_boolean()) o.down = down->get<bool>();
  if (std::string bad = BadOwner(o); !bad.empty()) {
    base::Log::Warn("ignoring the claim " + file + ": its \"" + bad +
                    "\" is not what erdma-cni writes; remove the file if no pod uses the device");
    return std::nullopt;
  }
  return o;
}

// The owner a claim or share file names (its file's identity into `id`); nullopt when there is none.
std::optional<ClaimOwner> ReadOwner(const std::string& path, base::FileId* id = nullptr) {
  auto text = base::ReadFileNoFollow(path, kMaxClaimBytes, id);
  return text.ok() ? ParseOwner(*text, path) : std::nullopt;
}

// The owner of the claim whose link the index entry `key` is: nullopt when there is none, or the entry is no
// longer a link of the claim file of the device its owner names.
std::optional<ClaimOwner> IndexedOwner(const std::string& devices_dir, const std::string& key) {
  base::FileId id;
  std::optional<ClaimOwner> owner = ReadOwner(IndexDir(devices_dir) + "/" + key, &id);
  if (!owner || base::FileIdOf(devices_dir + "/" + owner->device) != id) return std::nullopt;
  return owner;
}

// A claim's links are its name in devices/ and its index entries (or one on its way in, `<key>.tmp.<pid>`).
// A link planted from elsewhere would make root write that other file: the claim is refused, the path named.
// The owner's entries are counted first; the whole index is listed only when they miss a link.
base::Status CheckClaimLinks(const DeviceClaim& claim, const std::string& path, int fd,
                             const std::string& devices_dir, const std::string& device) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return base::SysError("stat the claim " + path, errno);
  const std::string fix = "; remove it (and its other links) if no pod uses " + device;
  if (!S_ISREG(st.st_mode))
    return base::Error(base::Code::kState, "the claim " + path + " is not a regular file" + fix, "",
                       kHostileState);
  if (st.st_nlink <= 1) return base::Ok();
  const std::string index = IndexDir(devices_dir);
  auto links_among = [&](const std::vector<std::string>& names) {
    nlink_t n = 1;
    for (const std::string& e : names)
      if (auto id = base::FileIdOf(index + "/" + e); id && id->dev == st.st_dev && id->ino == st.st_ino) ++n;
    return n;
  };
  const std::optional<ClaimOwner> owner = claim.Owner();
  nlink_t explained = owner ? links_among(IndexKeys(*owner)) : 1;
  if (st.st_nlink > explained)
    if (auto entries = base::ListFiles(index); entries.ok()) explained = links_among(*entries);
  if (st.st_nlink <= explained) return base::Ok();
  return base::Error(base::Code::kState,
                     "the claim " + path + " has " + std::to_string(st.st_nlink) +
                         " links and the claims' index explains " + std::to_string(explained) +
                         ": another link to it was made outside erdma-cni, and root would write through it" +
                         fix,
                     "", kHostileState);
}

// Removes `owner`'s index entries that still link the claim open at `fd`, but for `keep` (a new owner's).
void DropIndexEntries(const std::string& claim_path, int fd, const ClaimOwner& owner,
                      const std::vector<std::string>& keep = {}) {
  const std::string index = IndexDir(DirOf(claim_path));
  for (const std::string& key : IndexKeys(owner)) {
    if (std::find(keep.begin(), keep.end(), key) != keep.end()) continue;
    if (base::Status s = base::RemoveFileIfSame(index + "/" + key, fd); !s.ok())
      base::Log::Warn("left the claims' index entry " + key + ": " + s.error().msg);
  }
}

// Every readable claim, without locking: (file name, owner).
std::vector<std::pair<std::string, ClaimOwner>> ReadClaims(const std::string& devices_dir) {
  std::vector<std::pair<std::string, ClaimOwner>> out;
  auto files = base::ListFiles(devices_dir);
  if (!files.ok()) return out;
  for (const auto& f : *files)
    if (auto owner = ReadOwner(devices_dir + "/" + f)) out.emplace_back(f, std::move(*owner));
  return out;
}

// Under the parent's claim lock: its share directory goes if left empty; `sweep` (GC) first drops its stale
// shares, which otherwise are not read. Without the lock it warns and leaves both.
void TidyParent(const std::string& devices_dir, const std::string& children_dir, const std::string& parent,
                int wait_ms, bool sweep) {
  auto lock = DeviceClaim::Lock(devices_dir, parent, wait_ms);
  if (!lock.ok()) {
    base::Log::Warn(std::string(sweep ? "GC: not sweeping the shares of " : "left the share directory of ") +
                    parent + ": " + lock.error().msg);
    return;
  }
  if (sweep)
    (void)LiveShares(children_dir, parent);
  else
    base::RemoveDirIfEmpty(children_dir + "/" + parent);
  if (!lock->Owner()) lock->Remove();  // nobody owns the parent
}

}  // namespace

base::Result<DeviceClaim> DeviceClaim::Lock(const std::string& devices_dir, const std::string& device,
                                            int wait_ms) {
  const base::phase::Scope phase("claim");
  auto lock = base::FileLock::Acquire(devices_dir + "/" + device, wait_ms);
  if (!lock.ok()) {
    base::Error e = std::move(lock).error();
    if (e.code == base::Code::kTryAgainLater)
      e.msg = "device " + device + " is being configured by another erdma-cni invocation; try again later";
    return e;
  }
  DeviceClaim claim(std::move(lock).value());
  RETURN_IF_ERROR(CheckClaimLinks(claim, claim.lock_.path(), claim.lock_.fd(), devices_dir, device));
  return claim;
}

std::optional<ClaimOwner> DeviceClaim::Owner() const {
  const base::phase::Scope phase("claim");
  std::string text;
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(lock_.fd(), buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    off += n;
    if (text.size() > kMaxClaimBytes) return std::nullopt;
    // A short read is the end: nobody writes a claim without its lock, which we hold.
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  return ParseOwner(text, lock_.path());
}

base::Status DeviceClaim::SetOwner(const ClaimOwner& o) {
  const base::phase::Scope phase("claim");
  const std::string text = OwnerText(o);
  const std::optional<ClaimOwner> before = Owner();
  const std::vector<std::string> keys = IndexKeys(o);
  // The index's entries first: they may name this file before it names its owner, never after.
  const std::string index = IndexDir(DirOf(lock_.path()));
  if (base::Status s = base::EnsurePrivateDirs(index); !s.ok())
    return std::move(s).error().WithContext("indexing the claim " + lock_.path());
  for (const std::string& key : keys)
    RETURN_IF_ERROR(base::LinkFile(lock_.path(), index + "/" + key, /*replace=*/true));
  // In place under the lock: a torn file reads as "no owner"; the owner's state is the authority anyway.
  if (::ftruncate(lock_.fd(), 0) != 0 ||
      ::pwrite(lock_.fd(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return base::Error(base::Code::kIo, "writing device claim: " + std::string(std::strerror(errno)), "",
                       errno);
  // A previous owner's other keys (a stale holder's state) no longer lead here.
  if (before) DropIndexEntries(lock_.path(), lock_.fd(), *before, keys);
  return base::Ok();
}

void DeviceClaim::Remove() {
  const base::phase::Scope phase("claim");
  const std::optional<ClaimOwner> owner = Owner();
  // The file first: an entry left behind leads nowhere; one gone before the file would hide the claim.
  lock_.Unlink();
  if (owner) DropIndexEntries(lock_.path(), lock_.fd(), *owner);
}

void DeviceClaim::Clear() {
  const std::optional<ClaimOwner> owner = Owner();
  // Like SetOwner: an empty claim is "no owner".
  if (::ftruncate(lock_.fd(), 0) != 0) {
    base::Log::Warn("clearing the claim " + lock_.path() + ": " + std::strerror(errno));
    return;
  }
  if (owner) DropIndexEntries(lock_.path(), lock_.fd(), *owner);
}

base::Status EnsureClaimIndex(const std::string& devices_dir) {
  if (IndexBuilt(devices_dir)) return base::Ok();
  const base::phase::Scope phase("claim");
  const std::string index = IndexDir(devices_dir);
  RETURN_IF_ERROR(base::EnsurePrivateDirs(index));
  // Two invocations that build it at once link the same files: the second's links replace the first's.
  size_t linked = 0;
  for (const auto& [file, owner] : ReadClaims(devices_dir)) {
    if (!ClaimIsLive(owner)) continue;
    for (const std::string& key : IndexKeys(owner))
      RETURN_IF_ERROR(base::LinkFile(devices_dir + "/" + file, index + "/" + key, /*replace=*/true));
    ++linked;
  }
  RETURN_IF_ERROR(base::MakePrivateDirs(index + "/" + kIndexBuilt));
  if (linked) base::Log::Info("indexed the " + std::to_string(linked) + " claims of " + devices_dir);
  return base::Ok();
}

ClaimLookup::ClaimLookup(std::string devices_dir)
    : devices_dir_(std::move(devices_dir)), indexed_(IndexBuilt(devices_dir_)) {}

std::optional<ClaimOwner> ClaimLookup::Find(const std::string& name, const std::string& mac,
                                            const std::string& pci) {
  const base::phase::Scope phase("claim");
  if (!indexed_) {
    if (!all_) all_ = ReadClaims(devices_dir_);
    // Liveness (a stat of the owner's state) only for a claim of the device.
    for (const auto& [file, owner] : *all_)
      if (((!name.empty() && owner.device == name) || (!mac.empty() && owner.mac == mac) ||
           (!pci.empty() && owner.pci == pci)) &&
          ClaimIsLive(owner))
        return owner;
    return std::nullopt;
  }
  auto live = [](const std::optional<ClaimOwner>& o) { return o && ClaimIsLive(*o); };
  if (conf::IsPlainFileName(name, 255)) {
    std::optional<ClaimOwner> o = ReadOwner(devices_dir_ + "/" + name);
    if (o && o->device == name && live(o)) return o;
  }
  if (!mac.empty())
    if (auto o = IndexedOwner(devices_dir_, "mac=" + mac); o && o->mac == mac && live(o)) return o;
  if (!pci.empty())
    if (auto o = IndexedOwner(devices_dir_, "pci=" + pci); o && o->pci == pci && live(o)) return o;
  return std::nullopt;
}

std::optional<ClaimOwner> FindClaim(const std::string& devices_dir, const std::string& name,
                                    const std::string& mac, const std::string& pci) {
  return ClaimLookup(devices_dir).Find(name, mac, pci);
}

bool ClaimIsLive(const ClaimOwner& owner) { return base::PathExists(owner.state_path); }

std::optional<ClaimOwner> ClaimOf(const std::string& devices_dir, const std::string& state_path) {
  if (IndexBuilt(devices_dir)) {
    auto o = IndexedOwner(devices_dir, "state=" + ShareName(state_path));
    if (o && o->state_path == state_path) return o;
    return std::nullopt;
  }
  for (const auto& [file, owner] : ReadClaims(devices_dir))
    if (owner.state_path == state_path) return owner;
  return std::nullopt;
}

base::Error InUseError(const std::string& what, const ClaimOwner& o) {
  return base::Error(base::Code::kTryAgainLater, what + " is in use by container " + o.container_id +
                                                     " (network " + o.network + ", interface " + o.if_name +
                                                     "); it returns when that attachment is deleted");
}

base::Status ShareParent(const std::string& devices_dir, const std::string& children_dir,
                         const std::string& parent, const ClaimOwner& owner, int wait_ms) {
  auto lock = DeviceClaim::Lock(devices_dir, parent, wait_ms);
  if (!lock.ok()) return std::move(lock).error();
  if (auto prior = lock->Owner(); prior && ClaimIsLive(*prior)) return InUseError(parent, *prior);
  const std::string dir = children_dir + "/" + parent;
  base::Status s = base::fault::Point("before", "share-write");
  if (s.ok()) s = base::MakePrivateDirs(dir);
  if (s.ok()) s = base::WriteFileAtomic(dir + "/" + ShareName(owner.state_path), OwnerText(owner));
  if (s.ok()) s = base::fault::Point("after", "share-write");
  if (!lock->Owner()) lock->Remove();
  if (!s.ok()) return std::move(s).error().WithContext("recording the share of " + parent);
  return base::Ok();
}

std::vector<ClaimOwner> LiveShares(const std::string& children_dir, const std::string& parent) {
  std::vector<ClaimOwner> live;
  const std::string dir = children_dir + "/" + parent;
  bool found = false;
  auto files = base::ListFiles(dir, &found);
  if (!files.ok()) return live;
  for (const auto& f : *files) {
    auto owner = ReadOwner(dir + "/" + f);
    if (owner && ClaimIsLive(*owner)) {
      live.push_back(std::move(*owner));
      continue;
    }
    (void)base::RemoveFile(dir + "/" + f);
    base::Log::Info("removed the stale share " + dir + "/" + f + ": its attachment's state is gone");
  }
  // A share is made under the parent's claim lock, which our caller holds.
  if (live.empty() && found) base::RemoveDirIfEmpty(dir);
  return live;
}

base::Error SharedError(const std::string& what, const std::string& device,
                        const std::vector<ClaimOwner>& sharers) {
  std::string pods;
  for (size_t i = 0; i < sharers.size() && i < 3; ++i)
    pods += (i ? "; " : "") + std::string("container ") + sharers[i].container_id + " (network " +
            sharers[i].network + ", interface " + sharers[i].if_name + ")";
  if (sharers.size() > 3) pods += "; and " + std::to_string(sharers.size() - 3) + " more";
  return base::Error(base::Code::kTryAgainLater,
                     what + ": " + device + " is the parent of child links of " +
                         std::to_string(sharers.size()) +
                         (sharers.size() == 1 ? " attachment" : " attachments") + " (" + pods +
                         "); taking the whole device would strand them. It returns when " +
                         "they are deleted; or give this network a device of its own");
}

void DropShares(const std::string& devices_dir, const std::string& children_dir,
                const std::string& state_path, int wait_ms, const std::string& locked_parent) {
  auto parents = base::ListDirs(children_dir);
  if (!parents.ok()) return;
  const std::string name = ShareName(state_path);
  for (const auto& parent : *parents) {
    const std::string file = children_dir + "/" + parent + "/" + name;
    if (!base::PathExists(file)) continue;
    // Our share goes without the lock; its directory only under it (a child ADD may be writing into it).
    (void)base::RemoveFile(file);
    if (parent == locked_parent) continue;
    TidyParent(devices_dir, children_dir, parent, wait_ms, /*sweep=*/false);
  }
}

void SweepShares(const std::string& devices_dir, const std::string& children_dir, int wait_ms) {
  auto parents = base::ListDirs(children_dir);
  if (!parents.ok()) return;
  for (const auto& parent : *parents) TidyParent(devices_dir, children_dir, parent, wait_ms, /*sweep=*/true);
}

std::vector<HoldRecord> ListHolds(const std::string& devices_dir, const std::string& children_dir) {
  std::vector<HoldRecord> out;
  // A share is listed under its parent's name, a claim under its file's.
  auto add = [&out](const std::string& dir, const std::string* parent) {
    for (auto& [file, owner] : ReadClaims(dir)) {
      const bool live = ClaimIsLive(owner);
      out.push_back(HoldRecord{parent ? *parent : file, parent != nullptr, std::move(owner), live});
    }
  };
  add(devices_dir, nullptr);
  auto parents = base::ListDirs(children_dir);
  if (!parents.ok()) return out;
  for (const auto& parent : *parents) add(children_dir + "/" + parent, &parent);
  return out;
}

}  // namespace cni

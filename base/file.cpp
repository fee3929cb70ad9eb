#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "base/clock.h"

namespace base {

Error SysError(const std::string& what, int err) {
  return Error(Code::kIo, what + ": " + std::strerror(err), "", err);
}

namespace {

// Whether a directory root keeps state in (or under) may be trusted: real, owned by root (or us), and
// writable by nobody else; an ancestor (not `last`) others may write only when it is sticky (/tmp).
Status CheckDirStat(const std::string& path, const struct stat& st, bool last) {
  if (S_ISLNK(st.st_mode))
    return Error(Code::kIo,
                 path + " is a symlink; dataDir must be a real directory with no symlink on its path " +
                     "(give the resolved path)");
  if (!S_ISDIR(st.st_mode)) return Error(Code::kIo, path + " exists and is not a directory");
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return Error(Code::kIo,
                 path + " is owned by uid " + std::to_string(st.st_uid) +
                     ", not root; dataDir and every directory above it must be root's (chown root)");
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (others_write && (last || !(st.st_mode & S_ISVTX))) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error(Code::kIo,
                 path + " has mode " + mode +
                     ": others may write it; dataDir must be 0700 (chmod 0700) and the directories "
                     "above it writable only by root");
  }
  return Ok();
}

// A directory this process checked: every file operation below is relative to its descriptor.
struct CheckedDir {
  std::shared_ptr<const UniqueFd> fd;  // shared with the FileLocks taken in it
  // Passed the check as a directory that holds files (CheckDirStat's `last`). One checked only as an ancestor
  // (sticky, others may write: /tmp) may start a later walk but never holds files.
  bool holds_files = false;
};

// The checked directories by path (Normalized). Never destroyed: the kernel closes the descriptors when the
// process exits. Locked: the plugin is one thread, but the suite's checkers read state from several at once.
class CheckedDirs {
 public:
  std::optional<CheckedDir> Find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dirs_.find(key);
    if (it == dirs_.end()) return std::nullopt;
    return it->second;
  }
  void Put(const std::string& key, CheckedDir dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_[key] = std::move(dir);
  }
  void Erase(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.erase(key);
  }
  // Erases `key` only while it still names the descriptor `fd`.
  void EraseIfAt(const std::string& key, int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = dirs_.find(key); it != dirs_.end() && it->second.fd->get() == fd) dirs_.erase(it);
  }
  // The deepest directory above `path` that was checked: its descriptor and
  // its path ("" with no descriptor when none is).
  std::pair<std::shared_ptr<const UniqueFd>, std::string> Ancestor(const std::string& path) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t end = path.rfind('/'); end != std::string::npos && end > 0; end = path.rfind('/', end - 1)) {
      auto it = dirs_.find(path.substr(0, end));
      if (it != dirs_.end()) return {it->second.fd, it->first};
    }
    return {nullptr, std::string()};
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, CheckedDir> dirs_;
};

CheckedDirs& Checked() {
  static auto* dirs = new CheckedDirs();
  return *dirs;
}

// `path` without repeated or trailing slashes ("/" stays "/"): the key of
// Checked, whatever the spelling of the dataDir it came from.
std::string Normalized(const std::string& path) {
  if (path.find("//") == std::string::npos && (path.size() < 2 || path.back() != '/')) return path;
  std::string out;
  for (char c : path)
    if (c != '/' || out.empty() || out.back() != '/') out += c;
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::shared_ptr<const UniqueFd> Keep(const std::string& key, UniqueFd fd, bool holds_files) {
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  Checked().Put(key, CheckedDir{shared, holds_files});
  return shared;
}

// After an operation in the checked directory open at `fd` failed with ENOENT: whether the directory was
// removed since it was checked (it never gets a link back). A removed one is forgotten: the next use walks
// the path again.
bool Removed(const std::string& key, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_nlink > 0) return false;
  Checked().EraseIfAt(key, fd);
  return true;
}

// "/", checked (as the walk's final directory when `last`).
Result<std::shared_ptr<const UniqueFd>> Root(bool last) {
  if (auto dir = Checked().Find("/"); dir && (dir->holds_files || !last)) return dir->fd;
  UniqueFd root(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return SysError("open /", errno);
  struct stat st {};
  if (::fstat(root.get(), &st) != 0) return SysError("stat /", errno);
  RETURN_IF_ERROR(CheckDirStat("/", st, last));
  return Keep("/", std::move(root), last || (st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
}

// Walks `path` (Normalized) one component at a time without following a symlink, checks each directory on its
// own descriptor and keeps it (Checked). `create` makes missing components (0700). Returns the final
// directory, or none when a component is missing and `create` is off.
Result<std::shared_ptr<const UniqueFd>> WalkPrivateDirs(const std::string& path, bool create) {
  if (path.empty() || path[0] != '/') return Error(Code::kIo, "not an absolute path: " + path);
  constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  for (;;) {
    // From the deepest directory above it already checked: what is below one
    // checked descriptor is reached through it, whatever happens to the path.
    auto [cur, walked] = Checked().Ancestor(path);
    // Checked by an earlier walk, it may have been removed since.
    bool cached = cur != nullptr;
    if (!cur) {
      ASSIGN_OR_RETURN(cur, Root(path == "/"));
    }
    const std::string start = walked;
    bool restart = false;
    size_t pos = walked.size();
    while (pos + 1 < path.size()) {
      const size_t begin = pos + 1;
      size_t next = path.find('/', begin);
      if (next == std::string::npos) next = path.size();
      const std::string comp = path.substr(begin, next - begin);
      pos = next;
      walked += "/" + comp;
      const bool last = next == path.size();
      if (comp == "." || comp == "..") return Error(Code::kIo, path + ": \".\" and \"..\" are not allowed");
      // Checked on the opened descriptor: nothing can be swapped in between.
      int fd = ::openat(cur->get(), comp.c_str(), kDirFlags);
      if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(cur->get(), comp.c_str(), 0700) == 0 || errno == EEXIST)
          fd = ::openat(cur->get(), comp.c_str(), kDirFlags);
        else if (errno != ENOENT)
          return SysError("mkdir " + walked, errno);
      }
      if (fd < 0) {
        const int err = errno;
        if (err == ENOENT) {
          // The directory the walk started from may have been removed since: start again above it.
          if (cached && Removed(start, cur->get())) {
            restart = true;
            break;
          }
          if (!create) return std::shared_ptr<const UniqueFd>();
          return SysError("mkdir " + walked, err);
        }
        // Not a directory, a symlink, or not ours to open: the check names it.
        struct stat st {};
        if (::fstatat(cur->get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
          return SysError("stat " + walked, errno);
        RETURN_IF_ERROR(CheckDirStat(walked, st, last));
        return SysError("open " + walked, err);
      }
      UniqueFd child(fd);
      struct stat st {};
      if (::fstat(child.get(), &st) != 0) return SysError("stat " + walked, errno);
      RETURN_IF_ERROR(CheckDirStat(walked, st, last));
      cur = Keep(walked, std::move(child), last || (st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
      cached = false;
    }
    if (!restart) return cur;
  }
}

}  // namespace

Result<std::string> ReadAll(int fd, const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return SysError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Code::kIo, path + " is not a regular file");
  return ReadRest(fd, path, max_bytes);
}

Result<std::string> ReadRest(int fd, const std::string& path, size_t max_bytes) {
  std::string out;
  char buf[2048];  // the plugin's files are small; docs/decisions/first-touched-pages.md
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("read " + path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes)
      return Error(Code::kIo, path + " is larger than " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("write " + what, errno);
    }
    off += static_cast<size_t>(n);
  }
  return Ok();
}

Status WaitForFlock(int fd, int wait_ms, const std::string& what, const std::function<bool()>& held) {
  const SteadyClock::time_point deadline = SteadyClock::now() + std::chrono::milliseconds(wait_ms);
  long sleep_us = 200;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (!held || held()) return Ok();
      return Error(Code::kIo, what + " was replaced while being locked", "", EAGAIN);
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return SysError("flock " + what, errno);
    if (SteadyClock::now() >= deadline)
      return Error(Code::kTryAgainLater, what + " is locked by another invocation");
    ::usleep(static_cast<useconds_t>(sleep_us));
    sleep_us = std::min(sleep_us * 2, 20000L);
  }
}

namespace {

// The checked descriptor of `dir` (Normalized); none when it (or a parent) does not exist. A cached one is
// used as it is: a directory removed since is noticed by the operation that fails in it (Removed).
Result<std::shared_ptr<const UniqueFd>> DirFd(const std::string& dir, bool create) {
  if (auto checked = Checked().Find(dir); checked && checked->holds_files) return checked->fd;
  return WalkPrivateDirs(dir, create);
}

// A file of a checked directory: the directory's descriptor (none: missing),
// its path (Checked's key) and the file's name, which is one component.
struct Entry {
  std::shared_ptr<const UniqueFd> dir;
  std::string dir_path;
  std::string name;
  int fd() const { return dir->get(); }
  // After the operation failed with `err`: whether to run it once more, in what a new Split finds, because
  // the directory was removed since it was checked (re-created meanwhile, or missing: kNoDir).
  bool Gone(int err) const { return err == ENOENT && Removed(dir_path, fd()); }
};

Result<Entry> Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size())
    return Error(Code::kIo, "not a file in a directory: " + path);
  std::string name = path.substr(slash + 1);
  if (name == "." || name == "..") return Error(Code::kIo, path + ": \".\" and \"..\" are not allowed");
  std::string dir = Normalized(slash == 0 ? "/" : path.substr(0, slash));
  ASSIGN_OR_RETURN(auto fd, DirFd(dir, false));
  return Entry{std::move(fd), std::move(dir), std::move(name)};
}

// Runs `op(at, err)` on the Entry of `path`; once more, on a new Split, when it set `err` to an errno for
// which the Entry is Gone.
template <typename R, typename Op>
R WithEntry(const std::string& path, const Op& op) {
  for (bool again = true;; again = false) {
    ASSIGN_OR_RETURN(Entry at, Split(path));
    int err = 0;
    R r = op(at, err);
    if (!again || !at.Gone(err)) return r;
  }
}

// Appends the entries of one d_type in the directory open at `fd` (read from
// its start) to `names`. Returns 0 or the errno of getdents64 (ENOENT: the
// directory was removed). getdents64, not fdopendir, which adds stat and fcntl calls.
int ReadEntries(int fd, unsigned char type, std::vector<std::string>& names) {
  // struct linux_dirent64, the kernel's record: d_ino, d_off, d_reclen, d_type, d_name.
  constexpr size_t kReclen = 16, kType = 18, kName = 19;
  alignas(8) char buf[2048];  // docs/decisions/first-touched-pages.md
  for (;;) {
    const ssize_t n = ::getdents64(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (size_t off = 0; off < static_cast<size_t>(n);) {
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + off + kReclen, sizeof reclen);
      const char* name = buf + off + kName;
      // Hidden files are left out (a dot names none of ours); directories
      // only lose "." and "..": a network may be named ".hidden".
      const bool listed =
          type == DT_DIR ? std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0 : name[0] != '.';
      if (static_cast<unsigned char>(buf[off + kType]) == type && listed) names.emplace_back(name);
      off += reclen;
    }
  }
}

Result<std::vector<std::string>> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// Entries of a checked directory; a missing one is empty (`*found` false).
Result<std::vector<std::string>> ListPrivate(const std::string& dir, unsigned char type, bool* found) {
  const std::string key = Normalized(dir);
  for (bool again = true;; again = false) {
    ASSIGN_OR_RETURN(auto dirfd, DirFd(key, false));
    if (found) *found = dirfd != nullptr;
    if (!dirfd) return std::vector<std::string>();
    const Entry at{std::move(dirfd), key, "."};
    // A descriptor of its own: the listing's position must not be shared.
    UniqueFd fd(::openat(at.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      if (again && at.Gone(err)) continue;
      return SysError("opendir " + dir, err);
    }
    std::vector<std::string> names;
    // Other errors end the listing where they happen.
    if (const int err = ReadEntries(fd.get(), type, names); again && at.Gone(err)) continue;
    return Sorted(std::move(names));
  }
}

constexpr int kNoDir = ENOENT;

// Walks `path` again, whatever was checked before, and keeps the result.
Status Recheck(const std::string& path, bool create) {
  const std::string key = Normalized(path);
  Checked().Erase(key);
  RETURN_IF_ERROR(WalkPrivateDirs(key, create));
  return Ok();
}

}  // namespace

Status MakePrivateDirs(const std::string& path) { return Recheck(path, /*create=*/true); }

Status CheckPrivateDir(const std::string& path) { return Recheck(path, /*create=*/false); }

Status EnsurePrivateDirs(const std::string& path) {
  RETURN_IF_ERROR(DirFd(Normalized(path), /*create=*/true));
  return Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& data, unsigned mode) {
  return WithEntry<Status>(path, [&](Entry& at, int& err) -> Status {
    if (!at.dir) return SysError("create " + path, kNoDir);
    const std::string tmp = at.name + ".tmp." + std::to_string(::getpid());
    constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
    // O_EXCL: a file already at the temp name (a crashed writer of the same pid
    // before a reboot, or something planted) is removed, never written through.
    UniqueFd fd(::openat(at.fd(), tmp.c_str(), kFlags, 0600));
    if (!fd.valid() && errno == EEXIST && ::unlinkat(at.fd(), tmp.c_str(), 0) == 0)
      fd = UniqueFd(::openat(at.fd(), tmp.c_str(), kFlags, 0600));
    if (!fd.valid()) {
      err = errno;
      return SysError("create " + path + ".tmp", err);
    }
    if (mode != 0600 && ::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
      const int err = errno;
      ::unlinkat(at.fd(), tmp.c_str(), 0);
      return SysError("chmod " + path + ".tmp", err);
    }
    if (Status w = WriteAll(fd.get(), data, path + ".tmp"); !w.ok()) {
      ::unlinkat(at.fd(), tmp.c_str(), 0);
      return w;
    }
    fd.Reset();
    if (::renameat(at.fd(), tmp.c_str(), at.fd(), at.name.c_str()) != 0) {
      err = errno;
      ::unlinkat(at.fd(), tmp.c_str(), 0);
      return SysError("rename " + path + ".tmp", err);
    }
    return Ok();
  });
}

Result<std::string> ReadFileNoFollow(const std::string& path, size_t max_bytes, FileId* id) {
  return WithEntry<Result<std::string>>(path, [&](Entry& at, int& err) -> Result<std::string> {
    if (!at.dir) return SysError("open " + path, kNoDir);
    // O_NONBLOCK: a FIFO planted at the path must not hang the plugin (it is
    // refused as not a regular file); regular files ignore the flag.
    UniqueFd fd(
        ::openat(at.fd(), at.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
    if (!fd.valid()) {
      err = errno;
      return SysError("open " + path, err);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return SysError("stat " + path, errno);
    if (!S_ISREG(st.st_mode)) return Error(Code::kIo, path + " is not a regular file");
    if (id)
      *id = FileId{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
    return ReadRest(fd.get(), path, max_bytes);
  });
}

std::optional<FileId> FileIdOf(const std::string& path) {
  auto at = Split(path);
  if (!at.ok() || !at->dir) return std::nullopt;
  struct stat st {};
  if (::fstatat(at->fd(), at->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return FileId{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
}

Status LinkFile(const std::string& from, const std::string& to, bool replace) {
  for (bool again = true;; again = false) {
    ASSIGN_OR_RETURN(Entry src, Split(from));
    ASSIGN_OR_RETURN(Entry dst, Split(to));
    if (!src.dir || !dst.dir) return SysError("link " + from + " as " + to, kNoDir);
    if (::linkat(src.fd(), src.name.c_str(), dst.fd(), dst.name.c_str(), 0) == 0) return Ok();
    if (errno == EEXIST) {
      if (!replace) return Ok();
      // Already a link of the same file: rename(2) of one link over another of the same file does nothing.
      if (const auto id = FileIdOf(from); id && id == FileIdOf(to)) return Ok();
      // A file already at the temp name (a crashed writer of the same pid) goes first.
      const std::string tmp = dst.name + ".tmp." + std::to_string(::getpid());
      ::unlinkat(dst.fd(), tmp.c_str(), 0);
      if (::linkat(src.fd(), src.name.c_str(), dst.fd(), tmp.c_str(), 0) == 0) {
        const int renamed = ::renameat(dst.fd(), tmp.c_str(), dst.fd(), dst.name.c_str());
        const int err = errno;
        // Gone with the rename, unless `to` had become a link of the same file meanwhile.
        ::unlinkat(dst.fd(), tmp.c_str(), 0);
        if (renamed != 0) return SysError("rename " + to + ".tmp", err);
        return Ok();
      }
    }
    const int err = errno;
    if (again && (src.Gone(err) || dst.Gone(err))) continue;
    return SysError("link " + from + " as " + to, err);
  }
}

Status RemoveFileIfSame(const std::string& path, int fd) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (!at.dir) return Ok();
  struct stat mine {
  }, there{};
  if (::fstat(fd, &mine) != 0) return SysError("stat " + path, errno);
  if (::fstatat(at.fd(), at.name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Ok() : SysError("stat " + path, errno);
  if (there.st_ino != mine.st_ino || there.st_dev != mine.st_dev) return Ok();
  if (::unlinkat(at.fd(), at.name.c_str(), 0) != 0 && errno != ENOENT)
    return SysError("unlink " + path, errno);
  return Ok();
}

Result<std::string> ReadKernelFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return SysError("open " + path, errno);
  return ReadAll(fd.get(), path, max_bytes);
}

Status RemoveFile(const std::string& path) {
  return WithEntry<Status>(path, [&](Entry& at, int& err) -> Status {
    if (!at.dir || ::unlinkat(at.fd(), at.name.c_str(), 0) == 0) return Ok();
    err = errno;
    if (err != ENOENT) return SysError("unlink " + path, err);
    return Ok();
  });
}

Status RenameFile(const std::string& path, const std::string& new_name) {
  return WithEntry<Status>(path, [&](Entry& at, int& err) -> Status {
    if (!at.dir) return SysError("rename " + path, kNoDir);
    if (new_name.empty() || new_name.find('/') != std::string::npos || new_name == "." || new_name == "..")
      return Error(Code::kIo, "not a file name: " + new_name);
    if (::renameat(at.fd(), at.name.c_str(), at.fd(), new_name.c_str()) == 0) return Ok();
    err = errno;
    return SysError("rename " + path, err);
  });
}

void RemoveDirIfEmpty(const std::string& path) {
  for (bool again = true;; again = false) {
    auto at = Split(path);
    if (!at.ok() || !at->dir) return;
    if (::unlinkat(at->fd(), at->name.c_str(), AT_REMOVEDIR) == 0) {
      Checked().Erase(Normalized(path));
      return;
    }
    if (!again || !at->Gone(errno)) return;
  }
}

Result<std::vector<std::string>> ListFiles(const std::string& dir, bool* found) {
  return ListPrivate(dir, DT_REG, found);
}

Result<std::vector<std::string>> ListDirs(const std::string& dir) {
  return ListPrivate(dir, DT_DIR, nullptr);
}

Result<std::vector<std::string>> ListKernelDirs(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return SysError("opendir " + dir, errno);
  std::vector<std::string> names;
  (void)ReadEntries(fd.get(), DT_DIR, names);
  return Sorted(std::move(names));
}

bool PathExists(const std::string& path) {
  auto found = Exists(path);
  return found.ok() && *found;
}

Result<bool> Exists(const std::string& path) {
  return WithEntry<Result<bool>>(path, [&](Entry& at, int& err) -> Result<bool> {
    if (!at.dir) return false;
    struct stat st {};
    if (::fstatat(at.fd(), at.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
    err = errno;
    if (err == ENOENT || err == ENOTDIR) return false;
    return SysError("stat " + path, err);
  });
}

Result<bool> PrivateDirExists(const std::string& dir) {
  const std::string key = Normalized(dir);
  for (bool again = true;; again = false) {
    ASSIGN_OR_RETURN(auto fd, DirFd(key, false));
    if (!fd) return false;
    // A directory removed since this process checked it is walked again.
    if (again && Removed(key, fd->get())) continue;
    return true;
  }
}

Result<FileLock> FileLock::Acquire(const std::string& path, int wait_ms) {
  return WithEntry<Result<FileLock>>(path, [&](Entry& at, int& err) -> Result<FileLock> {
    if (!at.dir) return SysError("open lock " + path, kNoDir);
    for (;;) {
      UniqueFd fd(::openat(at.fd(), at.name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!fd.valid()) {
        err = errno;
        return SysError("open lock " + path, err);
      }
      // The previous holder may have unlinked the file after we opened it:
      // only the inode currently at `path` counts.
      Status locked = WaitForFlock(fd.get(), wait_ms, path, [&] {
        struct stat held {
        }, now{};
        return ::fstat(fd.get(), &held) == 0 &&
               ::fstatat(at.fd(), at.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
               held.st_ino == now.st_ino && held.st_dev == now.st_dev;
      });
      // The lock keeps the directory's descriptor, for Unlink after the cache moved on.
      if (locked.ok()) return FileLock(std::move(fd), std::move(at.dir), std::move(at.name), path);
      if (locked.error().sys_errno == EAGAIN) continue;
      if (locked.error().code == Code::kTryAgainLater)
        return Error(Code::kTryAgainLater,
                     path + " is locked by another erdma-cni invocation; try again later");
      return std::move(locked).error();
    }
  });
}

void FileLock::Unlink() { ::unlinkat(dir_->get(), name_.c_str(), 0); }

}  // namespace base

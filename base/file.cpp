#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>

namespace base {

Error SysError(const std::string& what, int err) {
  return Error(Code::kIo, what + ": " + std::strerror(err), "", err);
}

namespace {

// Whether a directory root keeps state in (or under) may be trusted: real,
// owned by root (or us), and writable by nobody else. An ancestor that others
// may write is still fine when it is sticky (/tmp): they cannot rename or
// remove our entries there, and a directory they planted fails the owner check.
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

// The directories this process checked (WalkPrivateDirs), by path: every file
// operation below is relative to the descriptor of the checked inode, so a
// directory swapped for a symlink after the check cannot redirect it. An
// entry whose directory was removed since (no links left) is walked again.
std::map<std::string, UniqueFd>& CheckedDirs() {
  static std::map<std::string, UniqueFd> dirs;
  return dirs;
}

// The directories above them that a walk passed (checked as ancestors: a
// sticky one may be writable by others): where a later walk may start, never
// a place for files.
std::map<std::string, UniqueFd>& WalkedAncestors() {
  static std::map<std::string, UniqueFd> dirs;
  return dirs;
}

// The deepest directory above `path` that this process checked and that
// still exists: a copy of its descriptor and
// its path; "/" opened afresh when there is none.
Result<std::pair<UniqueFd, std::string>> CheckedAncestor(const std::string& path) {
  for (size_t end = path.rfind('/'); end != std::string::npos && end > 0; end = path.rfind('/', end - 1)) {
    for (auto* dirs : {&CheckedDirs(), &WalkedAncestors()}) {
      auto it = dirs->find(path.substr(0, end));
      if (it == dirs->end()) continue;
      struct stat st {};
      if (::fstat(it->second.get(), &st) != 0 || st.st_nlink == 0) {
        dirs->erase(it);
        continue;
      }
      UniqueFd copy(::fcntl(it->second.get(), F_DUPFD_CLOEXEC, 0));
      if (!copy.valid()) return SysError("dup " + it->first, errno);
      return std::make_pair(std::move(copy), it->first);
    }
  }
  UniqueFd root(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return SysError("open /", errno);
  struct stat st {};
  if (::fstat(root.get(), &st) != 0) return SysError("stat /", errno);
  RETURN_IF_ERROR(CheckDirStat("/", st, path.find_first_not_of('/') == std::string::npos));
  return std::make_pair(std::move(root), std::string());
}

// Walks `path` one component at a time, never following a symlink,
// checking each directory (CheckDirStat). `create` makes missing components
// (0700). Returns the final directory, or an invalid fd when a component is
// missing and `create` is off.
Result<UniqueFd> WalkPrivateDirs(const std::string& path, bool create) {
  if (path.empty() || path[0] != '/') return Error(Code::kIo, "not an absolute path: " + path);
  // From the deepest directory above it already checked: what is below one
  // checked descriptor is reached through it, whatever happens to the path.
  ASSIGN_OR_RETURN(auto from, CheckedAncestor(path));
  UniqueFd cur = std::move(from.first);
  std::string walked = std::move(from.second);
  size_t pos = walked.size();
  struct stat st {};
  while (pos < path.size()) {
    const size_t start = path.find_first_not_of('/', pos);
    if (start == std::string::npos) break;
    size_t next = path.find('/', start);
    if (next == std::string::npos) next = path.size();
    const std::string comp = path.substr(start, next - start);
    pos = next;
    walked += "/" + comp;
    const bool last = path.find_first_not_of('/', next) == std::string::npos;
    if (comp == "." || comp == "..") return Error(Code::kIo, path + ": \".\" and \"..\" are not allowed");
    if (::fstatat(cur.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return SysError("stat " + walked, errno);
      if (!create) return UniqueFd();
      if (::mkdirat(cur.get(), comp.c_str(), 0700) != 0 && errno != EEXIST)
        return SysError("mkdir " + walked, errno);
      if (::fstatat(cur.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return SysError("stat " + walked, errno);
    }
    RETURN_IF_ERROR(CheckDirStat(walked, st, last));
    UniqueFd child(::openat(cur.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child.valid()) return SysError("open " + walked, errno);
    struct stat opened {};
    // Swapped between the stat and the open: only the checked inode counts.
    if (::fstat(child.get(), &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev)
      return Error(Code::kIo, walked + " changed while being checked");
    if (!last) {
      UniqueFd keep(::fcntl(child.get(), F_DUPFD_CLOEXEC, 0));
      if (keep.valid()) WalkedAncestors()[walked] = std::move(keep);
    }
    cur = std::move(child);
  }
  return Result<UniqueFd>(std::move(cur));
}

}  // namespace

Result<std::string> ReadAll(int fd, const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return SysError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Code::kIo, path + " is not a regular file");
  std::string out;
  char buf[8192];
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
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  long sleep_us = 200;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (!held || held()) return Ok();
      return Error(Code::kIo, what + " was replaced while being locked", "", EAGAIN);
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return SysError("flock " + what, errno);
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    long elapsed_ms = (t.tv_sec - start.tv_sec) * 1000 + (t.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= wait_ms) return Error(Code::kTryAgainLater, what + " is locked by another invocation");
    ::usleep(static_cast<useconds_t>(sleep_us));
    sleep_us = std::min(sleep_us * 2, 20000L);
  }
}

namespace {

// The checked descriptor of `dir`; -1 when it (or a parent) does not exist.
Result<int> DirFd(const std::string& dir, bool create) {
  auto& dirs = CheckedDirs();
  if (auto it = dirs.find(dir); it != dirs.end()) {
    struct stat st {};
    if (::fstat(it->second.get(), &st) == 0 && st.st_nlink > 0) return it->second.get();
    dirs.erase(it);
  }
  ASSIGN_OR_RETURN(UniqueFd fd, WalkPrivateDirs(dir, create));
  if (!fd.valid()) return -1;
  const int raw = fd.get();
  dirs[dir] = std::move(fd);
  return raw;
}

// A file of a checked directory: the directory's descriptor (-1: missing) and
// the file's name, which is one component.
struct Entry {
  int dirfd;
  std::string name;
};

Result<Entry> Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size())
    return Error(Code::kIo, "not a file in a directory: " + path);
  std::string name = path.substr(slash + 1);
  if (name == "." || name == "..") return Error(Code::kIo, path + ": \".\" and \"..\" are not allowed");
  ASSIGN_OR_RETURN(int fd, DirFd(slash == 0 ? "/" : path.substr(0, slash), false));
  return Entry{fd, std::move(name)};
}

// Entries of one d_type directly in the directory `fd` (taken over), sorted.
Result<std::vector<std::string>> ListEntries(int fd, const std::string& dir, unsigned char type) {
  std::vector<std::string> names;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int err = errno;
    ::close(fd);
    return SysError("opendir " + dir, err);
  }
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != type || e->d_name[0] == '.') continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Entries of a checked directory; a missing one is empty.
Result<std::vector<std::string>> ListPrivate(const std::string& dir, unsigned char type) {
  ASSIGN_OR_RETURN(int dirfd, DirFd(dir, false));
  if (dirfd < 0) return std::vector<std::string>();
  // A descriptor of its own: readdir's position must not be shared.
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("opendir " + dir, errno);
  return ListEntries(fd, dir, type);
}

constexpr int kNoDir = ENOENT;

}  // namespace

namespace {

// Walks `path` again, whatever was checked before, and keeps the result.
Status Recheck(const std::string& path, bool create) {
  CheckedDirs().erase(path);
  ASSIGN_OR_RETURN(UniqueFd fd, WalkPrivateDirs(path, create));
  if (fd.valid()) CheckedDirs()[path] = std::move(fd);
  return Ok();
}

}  // namespace

Status MakePrivateDirs(const std::string& path) { return Recheck(path, /*create=*/true); }

Status CheckPrivateDir(const std::string& path) { return Recheck(path, /*create=*/false); }

Status WriteFileAtomic(const std::string& path, const std::string& data) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (at.dirfd < 0) return SysError("create " + path, kNoDir);
  const std::string tmp = at.name + ".tmp." + std::to_string(::getpid());
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  // O_EXCL: a file already at the temp name (a crashed writer of the same pid
  // before a reboot, or something planted) is removed, never written through.
  UniqueFd fd(::openat(at.dirfd, tmp.c_str(), kFlags, 0600));
  if (!fd.valid() && errno == EEXIST && ::unlinkat(at.dirfd, tmp.c_str(), 0) == 0)
    fd = UniqueFd(::openat(at.dirfd, tmp.c_str(), kFlags, 0600));
  if (!fd.valid()) return SysError("create " + path + ".tmp", errno);
  if (Status w = WriteAll(fd.get(), data, path + ".tmp"); !w.ok()) {
    ::unlinkat(at.dirfd, tmp.c_str(), 0);
    return w;
  }
  fd.Reset();
  if (::renameat(at.dirfd, tmp.c_str(), at.dirfd, at.name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(at.dirfd, tmp.c_str(), 0);
    return SysError("rename " + path + ".tmp", err);
  }
  return Ok();
}

Result<std::string> ReadFileNoFollow(const std::string& path, size_t max_bytes) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (at.dirfd < 0) return SysError("open " + path, kNoDir);
  // O_NONBLOCK: a FIFO planted at the path must not hang the plugin (it is
  // refused as not a regular file); regular files ignore the flag.
  UniqueFd fd(::openat(at.dirfd, at.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return SysError("open " + path, errno);
  return ReadAll(fd.get(), path, max_bytes);
}

Result<std::string> ReadKernelFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return SysError("open " + path, errno);
  return ReadAll(fd.get(), path, max_bytes);
}

Status RemoveFile(const std::string& path) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (at.dirfd >= 0 && ::unlinkat(at.dirfd, at.name.c_str(), 0) != 0 && errno != ENOENT)
    return SysError("unlink " + path, errno);
  return Ok();
}

Status RenameFile(const std::string& path, const std::string& new_name) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (at.dirfd < 0) return SysError("rename " + path, kNoDir);
  if (new_name.empty() || new_name.find('/') != std::string::npos || new_name == "." || new_name == "..")
    return Error(Code::kIo, "not a file name: " + new_name);
  if (::renameat(at.dirfd, at.name.c_str(), at.dirfd, new_name.c_str()) != 0)
    return SysError("rename " + path, errno);
  return Ok();
}

void RemoveDirIfEmpty(const std::string& path) {
  auto at = Split(path);
  if (!at.ok() || at->dirfd < 0) return;
  if (::unlinkat(at->dirfd, at->name.c_str(), AT_REMOVEDIR) == 0) CheckedDirs().erase(path);
}

Result<std::vector<std::string>> ListFiles(const std::string& dir) { return ListPrivate(dir, DT_REG); }

Result<std::vector<std::string>> ListDirs(const std::string& dir) { return ListPrivate(dir, DT_DIR); }

Result<std::vector<std::string>> ListKernelDirs(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("opendir " + dir, errno);
  return ListEntries(fd, dir, DT_DIR);
}

bool PathExists(const std::string& path) {
  auto at = Split(path);
  struct stat st {};
  return at.ok() && at->dirfd >= 0 && ::fstatat(at->dirfd, at->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

Result<FileLock> FileLock::Acquire(const std::string& path, int wait_ms) {
  ASSIGN_OR_RETURN(Entry at, Split(path));
  if (at.dirfd < 0) return SysError("open lock " + path, kNoDir);
  // Our own descriptor of the directory, for Unlink after the cache moved on.
  UniqueFd dir(::fcntl(at.dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dir.valid()) return SysError("open lock " + path, errno);
  for (;;) {
    UniqueFd fd(::openat(dir.get(), at.name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return SysError("open lock " + path, errno);
    // The previous holder may have unlinked the file after we opened it:
    // only the inode currently at `path` counts.
    Status locked = WaitForFlock(fd.get(), wait_ms, path, [&] {
      struct stat held {
      }, now{};
      return ::fstat(fd.get(), &held) == 0 &&
             ::fstatat(dir.get(), at.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
             held.st_ino == now.st_ino && held.st_dev == now.st_dev;
    });
    if (locked.ok()) return FileLock(std::move(fd), std::move(dir), std::move(at.name), path);
    if (locked.error().sys_errno == EAGAIN) continue;
    if (locked.error().code == Code::kTryAgainLater)
      return Error(Code::kTryAgainLater,
                   path + " is locked by another erdma-cni invocation; try again later");
    return std::move(locked).error();
  }
}

void FileLock::Unlink() { ::unlinkat(dir_.get(), name_.c_str(), 0); }

}  // namespace base

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

namespace base {
namespace {

Error SysError(const std::string& what, int err) {
  return Error(Code::kIo, what + ": " + std::strerror(err), "", err);
}

}  // namespace

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

// Walks `path` from "/" one component at a time, never following a symlink,
// checking each directory (CheckDirStat). `create` makes missing components
// (0700). Returns the final directory, or an invalid fd when a component is
// missing and `create` is off.
Result<UniqueFd> WalkPrivateDirs(const std::string& path, bool create) {
  if (path.empty() || path[0] != '/') return Error(Code::kIo, "not an absolute path: " + path);
  UniqueFd cur(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur.valid()) return SysError("open /", errno);
  struct stat st {};
  if (::fstat(cur.get(), &st) != 0) return SysError("stat /", errno);
  RETURN_IF_ERROR(CheckDirStat("/", st, path.find_first_not_of('/') == std::string::npos));
  size_t pos = 0;
  std::string walked;
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
    cur = std::move(child);
  }
  return Result<UniqueFd>(std::move(cur));
}

}  // namespace

Status MakePrivateDirs(const std::string& path) {
  RETURN_IF_ERROR(WalkPrivateDirs(path, /*create=*/true));
  return Ok();
}

Status CheckPrivateDir(const std::string& path) {
  RETURN_IF_ERROR(WalkPrivateDirs(path, /*create=*/false));
  return Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  // O_EXCL: a file already at the temp name (a crashed writer of the same pid
  // before a reboot, or something planted) is removed, never written through.
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid() && errno == EEXIST && ::unlink(tmp.c_str()) == 0)
    fd = UniqueFd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return SysError("create " + tmp, errno);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::unlink(tmp.c_str());
      return SysError("write " + tmp, err);
    }
    off += static_cast<size_t>(n);
  }
  fd.Reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return SysError("rename " + tmp, err);
  }
  return Ok();
}

Result<std::string> ReadFileNoFollow(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: a FIFO planted at the path must not hang the plugin (it is
  // refused below as not a regular file); regular files ignore the flag.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return SysError("open " + path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return SysError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Code::kIo, path + " is not a regular file");
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("read " + path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return Error(Code::kIo, path + " is larger than expected");
  }
  return out;
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return SysError("unlink " + path, errno);
  return Ok();
}

namespace {

// Entries of one d_type directly in `dir`, sorted; a missing dir is empty.
Result<std::vector<std::string>> ListEntries(const std::string& dir, unsigned char type) {
  std::vector<std::string> names;
  // O_NOFOLLOW: a symlink in place of a directory we own (children/<parent>)
  // must not make us list, and then remove, the files of its target.
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return names;
    return SysError("opendir " + dir, errno);
  }
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

}  // namespace

Result<std::vector<std::string>> ListFiles(const std::string& dir) { return ListEntries(dir, DT_REG); }

Result<std::vector<std::string>> ListDirs(const std::string& dir) { return ListEntries(dir, DT_DIR); }

bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

Result<FileLock> FileLock::Acquire(const std::string& path, int wait_ms) {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  long sleep_us = 200;
  for (;;) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return SysError("open lock " + path, errno);
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      // The previous holder may have unlinked the file after we opened it:
      // only the inode currently at `path` counts.
      struct stat held {
      }, now{};
      if (::fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
          held.st_dev == now.st_dev)
        return FileLock(std::move(fd), path);
      continue;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return SysError("flock " + path, errno);
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    long elapsed_ms = (t.tv_sec - start.tv_sec) * 1000 + (t.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= wait_ms)
      return Error(Code::kTryAgainLater,
                   path + " is locked by another erdma-cni invocation; try again later");
    ::usleep(static_cast<useconds_t>(sleep_us));
    sleep_us = std::min(sleep_us * 2, 20000L);
  }
}

void FileLock::Unlink() { ::unlink(path_.c_str()); }

}  // namespace base

#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace base {
namespace {

Error SysError(const std::string& what, int err) {
  return Error(Code::kIo, what + ": " + std::strerror(err), "", err);
}

}  // namespace

Status MakePrivateDirs(const std::string& path) {
  if (path.empty() || path[0] != '/') return Error(Code::kIo, "not an absolute path: " + path);
  std::string cur;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty() || cur.back() == '/') continue;
    struct stat st {};
    if (::lstat(cur.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode) && next == path.size())
        return Error(Code::kIo, cur + " is a symlink; dataDir must be a real directory");
      // Symlinks above the last component (e.g. /var/run -> /run) are the
      // distribution's business; we only refuse the directory we own.
      if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
        return Error(Code::kIo, cur + " exists and is not a directory");
      continue;
    }
    if (errno != ENOENT) return SysError("stat " + cur, errno);
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return SysError("mkdir " + cur, errno);
  }
  return Ok();
}

Status CheckPrivateDir(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Ok() : SysError("stat " + path, errno);
  if (S_ISLNK(st.st_mode)) return Error(Code::kIo, path + " is a symlink; dataDir must be a real directory");
  if (!S_ISDIR(st.st_mode)) return Error(Code::kIo, path + " exists and is not a directory");
  return Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
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
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return names;
    return SysError("opendir " + dir, errno);
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

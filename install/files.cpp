#include "install/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/file.h"

namespace install {
namespace {

using base::SysError;

using base::Code;
using base::Error;
using base::UniqueFd;

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool SameTime(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

bool FileStamp::SameVersion(const FileStamp& o) const {
  return dev == o.dev && ino == o.ino && size == o.size && SameTime(mtime, o.mtime) &&
         SameTime(ctime, o.ctime);
}

base::Result<FileStamp> Stamp(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return SysError("stat " + path, errno);
  return FileStamp{st.st_dev,  st.st_ino,  st.st_size, st.st_mtim,
                   st.st_ctim, st.st_mode, st.st_uid,  st.st_gid};
}

base::Result<std::string> ReadFile(const std::string& path, size_t max_bytes, bool follow) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)));
  if (!fd.valid()) return SysError("open " + path, errno);
  return base::ReadAll(fd.get(), path, max_bytes);
}

base::Status ReplaceFile(const std::string& path, std::string_view data, mode_t mode, uid_t uid, gid_t gid,
                         const FileStamp* expect) {
  const std::string dir = DirOf(path);
  // Hidden, and the part after the last dot is mkstemp's letters and digits: libcni loads only names ending
  // in .conf, .conflist or .json, so a runtime listing the directory mid-write never picks the temp file up.
  std::string tmp = dir + "/." + path.substr(path.rfind('/') + 1) + ".erdma-cni-XXXXXX";
  UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd.valid()) return SysError("create a temp file in " + dir, errno);
  auto fail = [&tmp](Error e) {
    ::unlink(tmp.c_str());
    return e;
  };
  if (auto s = base::WriteAll(fd.get(), data, tmp); !s.ok()) return fail(s.error());
  if (::fchmod(fd.get(), mode & 07777) != 0) return fail(SysError("chmod " + tmp, errno));
  // Without CAP_CHOWN only our own ids are possible; ask for others only when the file we replace had them.
  if ((uid != ::geteuid() || gid != ::getegid()) && ::fchown(fd.get(), uid, gid) != 0) {
    const int err = errno;
    return fail(Error(Code::kIo,
                      path + ": cannot keep the owner " + std::to_string(uid) + ":" + std::to_string(gid) +
                          " of the file being replaced (chown: " + std::strerror(err) +
                          "); run erdma-cni-install with CAP_CHOWN, or make root own the file",
                      "", err));
  }
  if (::fsync(fd.get()) != 0) return fail(SysError("fsync " + tmp, errno));
  fd.Reset();
  if (expect) {
    auto now = Stamp(path);
    if (!now.ok() || !now->SameVersion(*expect))
      return fail(Error(Code::kTryAgainLater,
                        path + " changed while it was being edited (another writer); nothing was replaced, "
                               "run again"));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(SysError("rename " + tmp + " to " + path, errno));
  // The rename is durable only once the directory is.
  UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.valid() || ::fsync(d.get()) != 0) return SysError("fsync " + dir, errno);
  return base::Ok();
}

base::Result<DirLock> DirLock::Acquire(const std::string& dir, int wait_ms) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return SysError("open " + dir, errno);
  base::Status locked = base::WaitForFlock(fd.get(), wait_ms, dir);
  if (locked.ok()) return DirLock(std::move(fd));
  if (locked.error().code == Code::kTryAgainLater)
    return Error(Code::kTryAgainLater, dir + " is locked by another erdma-cni-install; try again later");
  return std::move(locked).error();
}

base::Result<std::string> FirstNetworkConfig(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return SysError("list " + dir, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!name.ends_with(".conf") && !name.ends_with(".conflist") && !name.ends_with(".json")) continue;
    // libcni skips directories only; a link to a file counts.
    struct stat st {};
    if (::stat((dir + "/" + name).c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    names.push_back(std::move(name));
  }
  ::closedir(d);
  if (names.empty())
    return Error(
        Code::kIo,
        "no network config (*.conf, *.conflist, *.json) in " + dir +
            ": the primary plugin (e.g. Terway) has not written its conflist yet; run again once it has",
        "", ENOENT);
  return *std::min_element(names.begin(), names.end());
}

base::Result<std::string> SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0) return SysError("readlink /proc/self/exe", errno);
  return DirOf(std::string(buf, static_cast<size_t>(n)));
}

}  // namespace install

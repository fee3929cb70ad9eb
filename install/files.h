// The installer's file operations on the node: replacing a file so that a reader sees the old or the new
// content and never a part, locking a directory, finding the config the runtime reads first.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/error.h"
#include "base/fd.h"

namespace install {

/// What tells one version of a file from the next: anyone's rewrite changes it.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
  timespec ctime{};
  mode_t mode = 0;  ///< type and permission bits
  uid_t uid = 0;
  gid_t gid = 0;
  bool SameVersion(const FileStamp& o) const;
};

/// lstat(2). A missing file is an error with sys_errno ENOENT.
base::Result<FileStamp> Stamp(const std::string& path);

/// Reads a regular file of at most `max_bytes`. `follow`: symlinks are followed (a ConfigMap-mounted file is
/// one); otherwise a symlink is an error (ELOOP). A missing file is an error with sys_errno ENOENT.
base::Result<std::string> ReadFile(const std::string& path, size_t max_bytes, bool follow);

/// Replaces `path` with `data`: a hidden temp file in the same directory (".<name>.erdma-cni-XXXXXX": a name
/// no runtime loads), fchmod to `mode`, fchown to `uid`/`gid` when they are not ours, fsync, rename(2) over
/// `path`, fsync of the directory: a reader sees the old file or the new one, whole. When `path` is no longer
/// version `expect` just before the rename, nothing is replaced: code 11. On failure `path` is untouched.
base::Status ReplaceFile(const std::string& path, std::string_view data, mode_t mode, uid_t uid, gid_t gid,
                         const FileStamp* expect = nullptr);

/// An exclusive flock(2) on a directory until destruction: installers take turns. Code 11 after `wait_ms`.
class DirLock {
 public:
  static base::Result<DirLock> Acquire(const std::string& dir, int wait_ms);

 private:
  explicit DirLock(base::UniqueFd fd) : fd_(std::move(fd)) {}
  base::UniqueFd fd_;
};

/// The file name in `dir` a runtime loads first: libcni lists the names ending in .conf, .conflist or .json,
/// sorted, and containerd and CRI-O take the first. Error with sys_errno ENOENT when there is none.
base::Result<std::string> FirstNetworkConfig(const std::string& dir);

/// The directory this program was started from (/proc/self/exe, links resolved).
base::Result<std::string> SelfDir();

}  // namespace install

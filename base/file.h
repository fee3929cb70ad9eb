// Files the plugin owns: state, claims. Writes are atomic (temp + rename) and not fsynced: state only has to
// survive the process being killed; a reboot destroys every pod netns anyway.
//
// A `path` below names an entry of a private directory, checked once per process (MakePrivateDirs); every
// operation runs relative to its descriptor, and fails (kIo) in a directory that fails the check. The rules:
// docs/security.md, "Only root may write the directory".
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/fd.h"

namespace base {

/// Code kIo: "`what`: strerror(err)", sys_errno `err`.
Error SysError(const std::string& what, int err);
/// write(2) until all of `data` is written (EINTR retried); `what` names the file.
Status WriteAll(int fd, std::string_view data, const std::string& what);
/// Reads the regular file open at `fd` (named `path`), at most `max_bytes`.
Result<std::string> ReadAll(int fd, const std::string& path, size_t max_bytes);
/// ReadAll for a caller that has already fstat'ed `fd` and found a regular file.
Result<std::string> ReadRest(int fd, const std::string& path, size_t max_bytes);
/// An exclusive flock(2) on `fd`, retried with back-off for at most `wait_ms` (then kTryAgainLater). `held`,
/// when given, is asked once the lock is taken whether it is on the right file; if not, an error with
/// sys_errno EAGAIN (the caller opens the file again).
Status WaitForFlock(int fd, int wait_ms, const std::string& what,
                    const std::function<bool()>& held = nullptr);

/// Creates `path` and its missing parents with mode 0700, walking from "/" one component at a time without
/// following symlinks. Fails (kIo) when a component is a symlink or not a directory (a symlink anywhere on
/// the path could redirect root's writes), is owned by neither root nor us, or may be written by others (an
/// ancestor may, when it is sticky, as /tmp is; `path` itself never).
Status MakePrivateDirs(const std::string& path);

/// Ok when `path` is such a directory or does not exist (nor a parent of it);
/// the error MakePrivateDirs would give otherwise. Creates nothing.
Status CheckPrivateDir(const std::string& path);

/// MakePrivateDirs, except that a `path` this process has already checked is
/// used as it was checked (nothing is walked again): for a directory a
/// CheckPrivateDir of the same command has just checked, or found missing.
Status EnsurePrivateDirs(const std::string& path);

/// Writes `data` to `path` via `path.tmp.<pid>` (created O_EXCL) and renameat(2); `mode` whatever the umask.
Status WriteFileAtomic(const std::string& path, const std::string& data, unsigned mode = 0600);

/// Which file a path led to: its device and inode numbers.
struct FileId {
  unsigned long long dev = 0, ino = 0;
  bool operator==(const FileId&) const = default;
};
/// Reads a regular file of at most `max_bytes` without following a symlink; `*id`, when given, says which
/// file it read. ENOENT gives an Error with sys_errno == ENOENT (callers test for it).
Result<std::string> ReadFileNoFollow(const std::string& path, size_t max_bytes, FileId* id = nullptr);
/// The file at `path` (not following a symlink); nullopt when there is none or it cannot be told.
std::optional<FileId> FileIdOf(const std::string& path);

/// Links the file `from` also as `to` (entries of private directories of one file system). An existing `to`
/// is replaced (through `to.tmp.<pid>` and renameat(2)) when `replace`, else left as it is (Ok).
Status LinkFile(const std::string& from, const std::string& to, bool replace);

/// Removes `path` only when it is the file open at `fd` (the same inode); a missing file is success.
Status RemoveFileIfSame(const std::string& path, int fd);

/// A file of /sys or /proc (written by the kernel, so the symlinks on its
/// path are the kernel's): O_NOFOLLOW on the last component only.
Result<std::string> ReadKernelFile(const std::string& path, size_t max_bytes);

/// unlinkat(2); a missing file is success.
Status RemoveFile(const std::string& path);
/// renameat(2) of `path` to `new_name` in the same directory.
Status RenameFile(const std::string& path, const std::string& new_name);
/// Removes the directory `path` when it is empty; silent otherwise.
void RemoveDirIfEmpty(const std::string& path);

/// Regular files directly in `dir` (names only, sorted, hidden ones left out); a missing dir is empty.
/// `*found`, when given, says whether `dir` was there.
Result<std::vector<std::string>> ListFiles(const std::string& dir, bool* found = nullptr);
/// Directories directly in `dir` (names only, sorted, no "." or "..").
Result<std::vector<std::string>> ListDirs(const std::string& dir);
/// ListDirs of a kernel directory (/proc), which is not checked as private.
Result<std::vector<std::string>> ListKernelDirs(const std::string& dir);

/// Whether there is an entry at `path` (not following a symlink). False also when it cannot be told (a
/// directory on its path fails the private check): a caller that must not mistake that for "absent" uses
/// Exists.
bool PathExists(const std::string& path);
/// Whether there is an entry at `path`; an error (kIo, naming the directory and the fix) when the directory
/// it would be in cannot be walked or fails the private check, never a silent false.
Result<bool> Exists(const std::string& path);
/// Whether `dir` exists as a private directory (CheckPrivateDir's rules, `dir` itself as one that holds
/// files); the check's error when it fails.
Result<bool> PrivateDirExists(const std::string& dir);

/// An exclusive flock on a lock file that is robust against the file being
/// unlinked by the previous holder (re-opens until the locked inode is the
/// one at `path`). Waits at most `wait_ms`; kTryAgainLater after that.
class FileLock {
 public:
  static Result<FileLock> Acquire(const std::string& path, int wait_ms);
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  /// Removes the lock file while still holding the lock.
  void Unlink();

 private:
  FileLock(UniqueFd fd, std::shared_ptr<const UniqueFd> dir, std::string name, std::string path)
      : fd_(std::move(fd)), dir_(std::move(dir)), name_(std::move(name)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::shared_ptr<const UniqueFd> dir_;  // the checked directory the lock file is in
  std::string name_;
  std::string path_;
};

}  // namespace base

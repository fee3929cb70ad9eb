// Opening a path that comes from a config without following a symlink anywhere along it: a symlink (or
// /proc's magic links, /proc/self/cwd) in any component could send root's writes outside the directory the
// node admin allowed.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <string>

#include "base/error.h"
#include "base/fd.h"

namespace base {

/// open(2) of `path` with `flags` (and `mode` when creating), refusing a symlink in any component (openat2
/// RESOLVE_NO_SYMLINKS; before Linux 5.6, O_NOFOLLOW on every component). `dirfd` and a relative `path`
/// resolve beneath `dirfd`. Errors: kIo with sys_errno (ELOOP for a symlink).
Result<UniqueFd> OpenNoSymlinks(const std::string& path, int flags, mode_t mode = 0, int dirfd = AT_FDCWD);

}  // namespace base

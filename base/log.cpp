#include "base/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "base/clock.h"
#include "base/escape.h"
#include "base/fd.h"
#include "base/path_open.h"

namespace base {
namespace {

struct LogState {
  UniqueFd fd;
  LogLevel level = LogLevel::kInfo;
  std::string tag;
  // The cap: the file's directory and name (for a rotation), what the file may still take, and whether this
  // invocation rotated it already or dropped a line.
  UniqueFd dir;
  std::string name;
  uint64_t max_bytes = 0;
  uint64_t room = 0;
  bool rotated = false;
  bool dropped = false;
};

LogState& State() {
  static LogState s;
  return s;
}

// By LogLevel's value.
constexpr std::array<std::string_view, 4> kLevelNames = {"debug", "info", "warn", "error"};

}  // namespace

std::string Cut(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "... (" + std::to_string(s.size()) + " bytes)";
}

bool ParseLogLevel(std::string_view s, LogLevel* out) {
  const auto it = std::find(kLevelNames.begin(), kLevelNames.end(), s);
  if (it == kLevelNames.end()) return false;
  *out = static_cast<LogLevel>(it - kLevelNames.begin());
  return true;
}

namespace {

// An existing log file is appended to and rotated only when it is ours: a regular file of our user with one
// link (not a FIFO, a device, another program's log, a hard link to a file elsewhere).
bool IsOurLog(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink == 1;
}

// Opens (creating it) the log file `name` in the directory open at `dir`; its size in `*size`. An error when
// it is not ours.
Result<UniqueFd> OpenLog(int dir, const std::string& name, uint64_t* size) {
  // O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of hanging the plugin.
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenNoSymlinks(name, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY, 0600, dir));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !IsOurLog(st))
    return Error(Code::kIo, "not a regular file of ours with a single link");
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

// What a file of `size` bytes may still take under the cap `max_bytes`.
uint64_t Room(uint64_t max_bytes, uint64_t size) { return max_bytes > size ? max_bytes - size : 0; }

void CannotLog(const std::string& path, const std::string& why) {
  const std::string line =
      "erdma-cni: cannot open logFile " + EscapeForDisplay(path) + " (" + why + "); logging to stderr only\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

void Log::Configure(const std::string& path, LogLevel level, uint64_t max_bytes) {
  LogState& s = State();
  s.level = level;
  s.fd.Reset();
  s.dir.Reset();
  s.max_bytes = max_bytes;
  s.rotated = s.dropped = false;
  if (path.empty()) return;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) return CannotLog(path, "not a file path");
  const std::string dir_path = slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = path.substr(slash + 1);
  // The directory once, without a symlink along it; the file and its rotation then stay inside it.
  auto dir = OpenNoSymlinks(dir_path, O_PATH | O_DIRECTORY);
  if (!dir.ok()) return CannotLog(path, dir.error().msg);
  uint64_t size = 0;
  auto fd = OpenLog(dir->get(), name, &size);
  if (!fd.ok()) return CannotLog(path, fd.error().msg);
  if (max_bytes > 0 && size >= max_bytes) {
    // rename() is atomic: two plugins rotating at once cost at most one old generation, never a torn line.
    const std::string old = name + ".1";
    if (::renameat(dir->get(), name.c_str(), dir->get(), old.c_str()) == 0) {
      fd = OpenLog(dir->get(), name, &size);
      if (!fd.ok()) return CannotLog(path, fd.error().msg);
    }
  }
  s.room = Room(max_bytes, size);
  s.fd = std::move(*fd);
  s.dir = std::move(*dir);
  s.name = name;
}

namespace {

// Appends `line` to the log file within its cap. A line that does not fit rotates the file once an invocation
// (the full file becomes <name>.1; an empty one is not worth it); in the new file room is kept for the note
// that says lines were dropped, which the first line that still does not fit writes instead of itself.
void AppendCapped(LogState& s, const std::string& line) {
  auto append = [&s](const std::string& text) {
    (void)!::write(s.fd.get(), text.data(), text.size());
    if (s.max_bytes) s.room -= text.size();
  };
  if (s.dropped) return;
  if (s.max_bytes == 0 || (!s.rotated && line.size() <= s.room)) return append(line);
  const std::string note = "erdma-cni: this invocation's further log lines are dropped: logMaxBytes (" +
                           std::to_string(s.max_bytes) + ") reached\n";
  if (s.rotated && line.size() + note.size() <= s.room) return append(line);
  if (!s.rotated && s.room < s.max_bytes) {
    s.rotated = true;
    const std::string old = s.name + ".1";
    if (::renameat(s.dir.get(), s.name.c_str(), s.dir.get(), old.c_str()) == 0) {
      uint64_t size = 0;
      auto fd = OpenLog(s.dir.get(), s.name, &size);
      if (!fd.ok()) {
        s.fd.Reset();
        return;
      }
      s.fd = std::move(*fd);
      s.room = Room(s.max_bytes, size);
      return AppendCapped(s, line);
    }
  }
  s.dropped = true;
  if (note.size() <= s.room) append(note);
}

}  // namespace

void Log::SetTag(std::string tag) { State().tag = std::move(tag); }

void Log::Write(LogLevel level, std::string_view msg) {
  LogState& s = State();
  const bool to_file = s.fd.valid() && level >= s.level;
  const bool to_stderr = level >= LogLevel::kError;
  if (!to_file && !to_stderr) return;

  const timespec ts = ReadClock(CLOCK_REALTIME);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  const std::string_view name = kLevelNames[static_cast<size_t>(level)];
  char head[128];
  std::snprintf(head, sizeof head, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %.*s [%d] ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ts.tv_nsec / 1000000,
                static_cast<int>(name.size()), name.data(), static_cast<int>(getpid()));
  std::string line;
  line.reserve(64 + s.tag.size() + msg.size());
  line.append(head);
  // Escaped: a newline in a pod's name or the kernel's text cannot start a forged line.
  if (!s.tag.empty()) line.append(EscapeForDisplay(s.tag)).append(": ");
  line.append(EscapeForDisplay(Cut(msg, kMaxLogMessageBytes))).append("\n");
  // One write() per line: O_APPEND keeps lines from parallel plugins whole.
  if (to_file) AppendCapped(s, line);
  if (to_stderr) (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace base

#include "base/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

#include "base/fd.h"

namespace base {
namespace {

struct LogState {
  UniqueFd fd;
  LogLevel level = LogLevel::kInfo;
  std::string tag;
};

LogState& State() {
  static LogState s;
  return s;
}

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "?";
}

}  // namespace

bool ParseLogLevel(std::string_view s, LogLevel* out) {
  if (s == "debug")
    *out = LogLevel::kDebug;
  else if (s == "info")
    *out = LogLevel::kInfo;
  else if (s == "warn")
    *out = LogLevel::kWarn;
  else if (s == "error")
    *out = LogLevel::kError;
  else
    return false;
  return true;
}

void Log::Configure(const std::string& path, LogLevel level, uint64_t max_bytes) {
  LogState& s = State();
  s.level = level;
  s.fd.Reset();
  if (path.empty()) return;
  // O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of
  // hanging the plugin; regular files ignore the flag.
  auto open_log = [&] {
    return ::open(path.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  };
  int fd = open_log();
  struct stat st {};
  if (fd >= 0 && max_bytes > 0 && ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= max_bytes) {
    // Size cap: the full file becomes <path>.1 (replacing the previous
    // one) and a new one starts. rename() is atomic; two plugins rotating at
    // once cost at most one old generation, never a torn line.
    const std::string old = path + ".1";
    if (::rename(path.c_str(), old.c_str()) == 0) {
      ::close(fd);
      fd = open_log();
    }
  }
  if (fd < 0) {
    std::fprintf(stderr, "erdma-cni: cannot open logFile %s; logging to stderr only\n", path.c_str());
    return;
  }
  s.fd.Reset(fd);
}

void Log::SetTag(std::string tag) { State().tag = std::move(tag); }

void Log::Write(LogLevel level, std::string_view msg) {
  LogState& s = State();
  const bool to_file = s.fd.valid() && level >= s.level;
  const bool to_stderr = level >= LogLevel::kError;
  if (!to_file && !to_stderr) return;

  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  char stamp[96];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ts.tv_nsec / 1000000);
  std::string line;
  line.reserve(64 + s.tag.size() + msg.size());
  line.append(stamp).append(" ").append(LevelName(level)).append(" [").append(std::to_string(getpid()));
  line.append("] ");
  if (!s.tag.empty()) line.append(s.tag).append(": ");
  line.append(msg).append("\n");
  // One write() per line: O_APPEND keeps lines from parallel plugins whole.
  if (to_file) (void)!::write(s.fd.get(), line.data(), line.size());
  if (to_stderr) (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace base

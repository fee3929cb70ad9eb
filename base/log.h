// Logging: one line per step, tagged with the attachment, to the configured
// file; errors also to stderr, where runtimes capture them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace base {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

/// Parses "debug" | "info" | "warn" | "error".
bool ParseLogLevel(std::string_view s, LogLevel* out);

/// The most of one message a line holds; the rest is left out, its length said.
inline constexpr size_t kMaxLogMessageBytes = 4096;

/// `s` when it is at most `max` bytes, else its first `max` bytes and "... (N bytes)": for input echoed
/// in a message or the log.
std::string Cut(std::string_view s, size_t max);

/// Process-wide logger; an exec plugin has exactly one attachment per run.
class Log {
 public:
  /// Opens `path` for append (empty: no file), refusing a symlink anywhere along it and any existing file
  /// that is not a regular file of ours with one link. When it has reached `max_bytes` (0: no cap) it is
  /// first renamed to `<path>.1` within its directory; a line that would take it past `max_bytes` rotates it
  /// once more, and what one invocation writes beyond that is dropped with one line saying so: the file
  /// never passes `max_bytes`. Never fails the plugin: a log file that cannot be opened is reported once on
  /// stderr.
  static void Configure(const std::string& path, LogLevel level, uint64_t max_bytes = 0);
  /// Tag put on every line, e.g. "net=erdma cid=abc123 if=erdma0 pod=ns/name".
  static void SetTag(std::string tag);
  /// One line; the tag and `msg` are escaped (base::EscapeForDisplay), `msg` cut to kMaxLogMessageBytes.
  static void Write(LogLevel level, std::string_view msg);

  static void Debug(std::string_view m) { Write(LogLevel::kDebug, m); }
  static void Info(std::string_view m) { Write(LogLevel::kInfo, m); }
  static void Warn(std::string_view m) { Write(LogLevel::kWarn, m); }
  static void Error(std::string_view m) { Write(LogLevel::kError, m); }
};

}  // namespace base

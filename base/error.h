// One error type for the whole plugin. Only cni/ turns it into the spec's JSON.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace base {

/// CNI error codes (spec section "Error") plus erdma-cni's own (100+, docs/errors.md).
enum class Code : int {
  kOk = 0,
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnv = 4,
  kIo = 5,
  kDecoding = 6,
  kInvalidConfig = 7,
  kTryAgainLater = 11,
  kNotAvailable = 50,
  kLimitedConnectivity = 51,
  // erdma-cni's own codes; keep docs/errors.md in step.
  kDeviceNotFound = 100,      ///< the selected host netdev does not exist
  kKernel = 101,              ///< the kernel refused a netlink request
  kRollbackIncomplete = 102,  ///< ADD failed and some steps could not be undone
  kNameTaken = 103,           ///< DEL: the device's host name is held by another link
  kIpam = 104,                ///< the IPAM plugin failed or returned garbage
  kCheckFailed = 105,         ///< CHECK found the attachment differs from its state
  kState = 106,               ///< the state file is unreadable or inconsistent
  kDelIncomplete = 107,       ///< DEL could not undo every step; state kept for a retry
  kInternal = 108,            ///< a bug: an exception escaped; nothing was half-done by it
  kRdmaUnavailable = 110,     ///< the kernel has no RDMA netlink, and rdma.required is set
  kRdmaMode = 111,            ///< the kernel's RDMA netns mode is not the one configured
  kRdmaNotPaired = 112,       ///< no usable RDMA device pairs with the netdev
  kRdmaCannotMove = 113,      ///< the RDMA driver cannot move between netns (EOPNOTSUPP)
  kSmcUnsupported = 114,      ///< SMC-R asked for, the kernel lacks SMC or a configured sysctl
};

/// An error with a CNI code, a message naming what and how to fix, and details
/// (kernel extack text, the failing step, collected secondary errors).
struct Error {
  Code code = Code::kKernel;
  std::string msg;
  std::string details;
  int sys_errno = 0;  ///< errno from the kernel or libc, 0 when not a system error
  /// The failing operation is known to have changed nothing (a plugin that never started, a sysctl write the
  /// kernel refused): the journal drops its step, so that no undo of it is ever owed (cni/journal/journal.h).
  bool changed_nothing = false;
  /// An exec'd plugin ran to its end and answered with a CNI error of its
  /// own (not killed, not timed out, not unparsable).
  bool plugin_answered = false;

  Error() = default;
  Error(Code c, std::string m, std::string d = {}, int e = 0)
      : code(c), msg(std::move(m)), details(std::move(d)), sys_errno(e) {}

  /// Prefixes the message with where the error travelled through ("moving eth1: ...").
  Error& Context(const std::string& what) {
    msg = what + ": " + msg;
    return *this;
  }
  Error&& WithContext(const std::string& what) && {
    Context(what);
    return std::move(*this);
  }
  Error&& ChangedNothing() && {
    changed_nothing = true;
    return std::move(*this);
  }
};

/// Minimal expected<T, Error>; C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { return *e_; }
  Error&& error() && { return std::move(*e_); }

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

inline Status Ok() { return {}; }

}  // namespace base

#define ECNI_CONCAT_INNER(a, b) a##b
#define ECNI_CONCAT(a, b) ECNI_CONCAT_INNER(a, b)

/// Returns the error of a Status/Result expression from the enclosing function.
#define RETURN_IF_ERROR(expr)                                       \
  do {                                                              \
    auto ecni_status_ = (expr);                                     \
    if (!ecni_status_.ok()) return std::move(ecni_status_).error(); \
  } while (0)

// tmp and lhs are declarations, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)   \
  auto tmp = (expr);                            \
  if (!tmp.ok()) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

/// `ASSIGN_OR_RETURN(auto x, F());` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL(ECNI_CONCAT(ecni_result_, __LINE__), lhs, expr)

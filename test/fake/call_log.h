// The call log and failure injection every fake shares: mutating calls are
// counted and logged, and a test can make the Nth one fail.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace fake {

class CallLog {
 public:
  /// Makes the n-th mutating call (1-based) from now on fail with `err`,
  /// changing nothing; later calls succeed. The error is
  /// {kKernel, "<what>: <strerror>", "fake: injected", err}.
  void FailCall(int n, int err = EIO);
  void ClearFailure();
  /// True once the injected failure has been returned.
  bool failure_fired() const { return fired_; }
  /// Mutating calls made (failed ones included) since construction or ClearCalls().
  int mutating_calls() const { return mutating_calls_; }
  /// One line per mutating call, e.g. "pod MoveLink 5 -> root as eth1", with
  /// " = EEXIST" appended when it failed (" = EIO (injected)" when injected).
  const std::vector<std::string>& calls() const { return calls_; }
  /// Forgets the log and the count (a pending FailCall keeps its position
  /// relative to the calls still to come).
  void ClearCalls();

  /// For the fakes: counts and logs a mutating call (`line`); returns the
  /// injected error, about `what`, when this is the call FailCall picked.
  std::optional<base::Error> Begin(const std::string& line, const std::string& what);
  /// For the fakes: the kernel's refusal of the call Begin logged last.
  base::Error Fail(const std::string& what, int err);

 private:
  int mutating_calls_ = 0;
  int fail_at_ = 0;  // absolute call number to fail; 0 = none
  int fail_errno_ = EIO;
  bool fired_ = false;
  std::vector<std::string> calls_;
};

/// "EEXIST" for EEXIST; "errno N" when unnamed.
std::string ErrnoName(int err);

}  // namespace fake

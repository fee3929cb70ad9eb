#include "test/fake/call_log.h"

#include <cstring>
#include <stdexcept>

namespace fake {

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : "errno " + std::to_string(err);
}

void CallLog::FailCall(int n, int err) {
  if (n < 1) throw std::invalid_argument("fake::CallLog::FailCall: n is 1-based");
  fail_at_ = mutating_calls_ + n;
  fail_errno_ = err;
  fired_ = false;
}

void CallLog::ClearFailure() {
  fail_at_ = 0;
  fired_ = false;
}

void CallLog::ClearCalls() {
  fail_at_ = fail_at_ > mutating_calls_ ? fail_at_ - mutating_calls_ : 0;
  mutating_calls_ = 0;
  calls_.clear();
}

std::optional<base::Error> CallLog::Begin(const std::string& line, const std::string& what) {
  ++mutating_calls_;
  calls_.push_back(line);
  if (fail_at_ != mutating_calls_) return std::nullopt;
  fail_at_ = 0;
  fired_ = true;
  calls_.back() += " = " + ErrnoName(fail_errno_) + " (injected)";
  return base::Error(base::Code::kKernel, what + ": " + std::strerror(fail_errno_), "fake: injected",
                     fail_errno_);
}

base::Error CallLog::Fail(const std::string& what, int err) {
  calls_.back() += " = " + ErrnoName(err);
  return base::Error(base::Code::kKernel, what + ": " + std::strerror(err), "", err);
}

}  // namespace fake

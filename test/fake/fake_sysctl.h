// A fake of netlink::Sysctl: per-namespace sysctl values keyed by fake::World
// namespace ids. A sysctl exists only once a test sets it (as a kernel has
// only the knobs it was built with); writes to others fail with ENOENT.
#pragma once

#include <cerrno>
#include <map>
#include <memory>
#include <string>

#include "netlink/sysctl.h"

namespace fake {

class SysctlWorld {
 public:
  /// Makes `name` exist in namespace `ns` with `value`.
  void Set(int ns, const std::string& name, const std::string& value) { values_[ns][name] = value; }
  std::string Get(int ns, const std::string& name) {
    return values_[ns].count(name) ? values_[ns][name] : "<none>";
  }
  /// Fails the n-th write from now with `err`, changing nothing.
  void FailWrite(int n, int err = EIO) {
    fail_at_ = writes_ + n;
    err_ = err;
  }
  /// Makes every write of `name` in `ns` fail with EACCES, as a sysctl that
  /// is read-only in a pod's netns does (it keeps its value).
  void ReadOnly(int ns, const std::string& name) { read_only_[ns][name] = true; }
  int writes() const { return writes_; }
  std::string Describe() const {
    std::string out;
    for (const auto& [ns, m] : values_)
      for (const auto& [k, v] : m) out += std::to_string(ns) + " " + k + "=" + v + "\n";
    return out;
  }
  std::unique_ptr<netlink::Sysctl> Open(int ns);

 private:
  friend class FakeSysctl;
  std::map<int, std::map<std::string, std::string>> values_;
  std::map<int, std::map<std::string, bool>> read_only_;
  int writes_ = 0;
  int fail_at_ = 0;
  int err_ = EIO;
};

class FakeSysctl : public netlink::Sysctl {
 public:
  FakeSysctl(SysctlWorld& w, int ns) : w_(w), ns_(ns) {}
  base::Result<std::optional<std::string>> Read(const std::string& name) override {
    auto& m = w_.values_[ns_];
    auto it = m.find(name);
    if (it == m.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  base::Status Write(const std::string& name, const std::string& value) override {
    if (++w_.writes_ == w_.fail_at_)
      return base::Error(base::Code::kKernel, "write sysctl " + name + ": injected", "fake: injected",
                         w_.err_);
    auto& m = w_.values_[ns_];
    auto it = m.find(name);
    if (it == m.end())
      return base::Error(base::Code::kKernel, "sysctl " + name + " does not exist", "", ENOENT);
    if (w_.read_only_[ns_][name])
      return base::Error(base::Code::kKernel, "open sysctl " + name + ": Permission denied", "", EACCES);
    it->second = value;
    return base::Ok();
  }

 private:
  SysctlWorld& w_;
  int ns_;
};

inline std::unique_ptr<netlink::Sysctl> SysctlWorld::Open(int ns) {
  return std::make_unique<FakeSysctl>(*this, ns);
}

}  // namespace fake

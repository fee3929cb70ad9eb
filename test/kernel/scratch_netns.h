// Private network namespaces for the netlink kernel tests: `ecni-rt-<pid>-<n>`,
// removed in the destructor (so also when a REQUIRE throws). Cross-checks go
// through iproute2's JSON output, never through the code under test.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace rt_test {

struct Cmd {
  int exit = -1;
  std::string out;
};

/// Runs `sh -c cmd` with stderr folded into the output.
inline Cmd Run(const std::string& cmd) {
  Cmd r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs `cmd` and REQUIREs success; returns its output.
inline std::string Must(const std::string& cmd) {
  Cmd r = Run(cmd);
  INFO("$ " << cmd << "\n" << r.out);
  REQUIRE(r.exit == 0);
  return r.out;
}

class ScratchNetns {
 public:
  ScratchNetns() : name_("ecni-rt-" + std::to_string(::getpid()) + "-" + std::to_string(Next())) {
    Run("ip netns del " + name_);  // left over from a crashed run with our pid
    Must("ip netns add " + name_);
    Must("ip -n " + name_ + " link set lo up");
  }
  ~ScratchNetns() { Run("ip netns del " + name_); }
  ScratchNetns(const ScratchNetns&) = delete;
  ScratchNetns& operator=(const ScratchNetns&) = delete;

  const std::string& name() const { return name_; }
  std::string path() const { return "/run/netns/" + name_; }

  /// `ip -n <ns> <args>`, REQUIREd to succeed.
  std::string Ip(const std::string& args) const { return Must("ip -n " + name_ + " " + args); }
  /// `ip -n <ns> <args>` without requiring success.
  Cmd TryIp(const std::string& args) const { return Run("ip -n " + name_ + " " + args); }
  /// `ip -n <ns> -j <args>` parsed; an empty output is an empty array.
  nlohmann::json Json(const std::string& args) const {
    const std::string out = Ip("-j " + args);
    if (out.find_first_not_of(" \n") == std::string::npos) return nlohmann::json::array();
    return nlohmann::json::parse(out);
  }

 private:
  static int Next() {
    static int counter = 0;
    return counter++;
  }
  std::string name_;
};

}  // namespace rt_test

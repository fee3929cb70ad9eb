// A fake kubelet (test/fake_kubelet/fake_kubelet.py) run for one test: its
// own scratch directory, socket and call log, stopped and removed at the end.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kubelet_test {

/// What the fake needs that this machine lacks ("python3-grpcio (python3 -c
/// 'import grpc' failed)"), or empty.
std::string MissingPython();

class FakeKubelet {
 public:
  /// Starts the fake in `mode` (fake_kubelet.py --mode) serving `pods` (a
  /// file in pods.json's shape; default the suite's pods.json), and waits
  /// until its socket accepts connections.
  explicit FakeKubelet(const std::string& mode, const std::string& pods = "");
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  const std::string& socket() const { return socket_; }
  const std::string& dir() const { return dir_; }
  /// The calls it answered, one "Method namespace/name -> CODE" each.
  std::vector<std::string> Calls() const;

 private:
  std::string dir_;
  std::string socket_;
  pid_t pid_ = -1;
};

}  // namespace kubelet_test

// The fake kubelet the "kubelet" rows ask: the test suite's pod-resources
// server (test/fake_kubelet/fake_kubelet.py, python3-grpcio) on the socket the
// bench's node file names, serving one pod (kKubeletPodArgs) that was given
// one device of kKubeletResource, and another (kKubeletPlainPodArgs) that was
// given none.
#pragma once

#include <sys/types.h>

#include <string>

namespace bench {

class FakeKubelet {
 public:
  FakeKubelet() = default;
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;
  /// Stops the server and removes its files.
  ~FakeKubelet();
  /// Starts the server, its pod holding the device ID `device`, and waits
  /// until it answers connections. "" when it serves, else why it does not
  /// (python3-grpcio or python3-grpc-tools missing, ...).
  std::string Start(const std::string& device);

 private:
  pid_t pid_ = -1;
  std::string dir_;
};

}  // namespace bench

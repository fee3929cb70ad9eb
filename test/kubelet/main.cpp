// The kubelet client against a fake kubelet (test/fake_kubelet/): a real
// gRPC server of python3-grpcio on a unix socket. Without Debian's python3
// and its grpc modules every test exits 77, which ctest reports as skipped
// with the reason below; never as a pass.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "test/kubelet/fake_kubelet.h"

int main(int argc, char* argv[]) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).rfind("--list", 0) == 0) listing = true;
  }
  if (!listing) {
    std::string missing = kubelet_test::MissingPython();
    if (!missing.empty()) {
      std::printf("SKIPPED: the fake kubelet needs %s\n", missing.c_str());
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}

// Kernel tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN for setns) and
// iproute2. Without them every test exits 77, which ctest reports as
// skipped with the reason below; never as a pass.
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "test/kernel/skip.h"

int main(int argc, char* argv[]) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--list", 0) == 0) listing = true;
  }
  if (!listing) {
    if (geteuid() != 0) {
      std::printf("SKIPPED: kernel tests need root (network namespaces, CAP_NET_ADMIN)\n");
      return 77;
    }
    if (std::system("ip netns list >/dev/null 2>&1") != 0) {
      std::printf("SKIPPED: kernel tests need iproute2's `ip netns`\n");
      return 77;
    }
  }
  const int rc = Catch::Session().run(argc, argv);
  if (rc == 0 && kt::AnySkipped()) return 77;  // skipped, and said why above
  return rc;
}

namespace kt {
namespace {
bool g_skipped = false;
}
void NoteSkip() { g_skipped = true; }
bool AnySkipped() { return g_skipped; }
}  // namespace kt

// erdma-cni: an exec-style CNI plugin. Everything lives in the library; this
// file only reads the real stdin and environment.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/fault.h"
#include "cni/diag.h"
#include "cni/run.h"
#include "conf/config.h"

// Set by CMake for the shipped target; other builds of this file say so.
#ifndef ERDMA_CNI_BUILD_INFO
#define ERDMA_CNI_BUILD_INFO "build info not recorded"
#endif

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::cout << "erdma-cni " << ERDMA_CNI_VERSION << " (" << ERDMA_CNI_BUILD_INFO
              << (base::fault::kEnabled ? ", fault hooks compiled in: for tests only" : "") << ")\n"
              << "CNI spec versions: 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0\n";
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "diag")
    return cni::RunDiag(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
  // Read at most one byte more than we accept, so an oversized config is
  // rejected without reading (or buffering) the rest.
  std::string in;
  char buf[65536];
  while (in.size() <= conf::kMaxConfigBytes) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  int rc = cni::Run([](const char* name) { return std::getenv(name); }, in, std::cout);
  std::cout.flush();
  return rc;
}

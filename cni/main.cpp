// erdma-cni: an exec-style CNI plugin. Everything lives in the library; this
// file only reads the real stdin and environment.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cni/run.h"
#include "conf/config.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::cout << "erdma-cni " << ERDMA_CNI_VERSION << "\n";
    return 0;
  }
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

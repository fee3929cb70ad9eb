// erdma-cni's entry point: only reads the real stdin and environment; the rest is the library.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/fault.h"
#include "base/phase.h"
#include "cni/admin/clear.h"
#include "cni/admin/diag.h"
#include "cni/admin/diag_run.h"
#include "cni/admin/help.h"
#include "cni/command/run.h"
#include "conf/config.h"
#include "conf/names.h"
#include "conf/version.h"

// Set by CMake for the shipped target; other builds of this file say so.
#ifndef ERDMA_CNI_BUILD_INFO
#define ERDMA_CNI_BUILD_INFO "build info not recorded"
#endif

namespace {

// write(2), not <iostream>: no stream static init per exec (docs/performance.md).
void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// A short-lived process: the heap is never trimmed, and libnl's 128 KiB buffers come from it, not mmap.
void TuneMalloc() {
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 1 << 20);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("ERDMA_CNI_PHASES")) base::phase::Enable();
  base::phase::Begin("input");
  TuneMalloc();
  // With CNI_COMMAND set erdma-cni is the plugin, whatever its arguments; without, they are an admin's.
  const char* cni_command = std::getenv("CNI_COMMAND");
  const std::string admin = argc > 1 && (!cni_command || !*cni_command) ? argv[1] : "";
  auto build = [] {
    return std::string(ERDMA_CNI_BUILD_INFO) +
           (base::fault::kEnabled ? ", fault hooks compiled in: for tests only" : "");
  };
  if (admin == "--help" || admin == "-h" || admin == "help") {
    WriteAll(STDOUT_FILENO, cni::HelpText(build()));
    return 0;
  }
  if (admin == "--version") {
    WriteAll(STDOUT_FILENO, std::string("erdma-cni ") + ERDMA_CNI_VERSION + " (" + build() +
                                ")\nCNI spec versions: " + conf::Join(conf::SupportedVersions(), " ") + "\n");
    return 0;
  }
  if (admin == "diag" || admin == "clear") {
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string> args(argv + 2, argv + argc);
    int rc = admin == "diag" ? cni::RunDiag(args, out, err) : cni::RunClear(args, out, err);
    WriteAll(STDOUT_FILENO, out.str());
    WriteAll(STDERR_FILENO, err.str());
    return rc;
  }
  // Neither a runtime nor an admin command: a person typed it; point to --help, never wait on a terminal.
  if ((!cni_command || !*cni_command) && (!admin.empty() || ::isatty(STDIN_FILENO))) {
    WriteAll(STDERR_FILENO,
             (admin.empty() ? std::string("erdma-cni: ")
                            : "erdma-cni: unknown command " + base::EscapeForDisplay(admin) + "; ") +
                 "a container runtime runs this CNI plugin with CNI_COMMAND set and the network's config on "
                 "stdin; `erdma-cni --help` says how to run it, diag and clear by hand\n");
    return 2;
  }
  // One byte over the limit at most: an oversized config is refused unread. A small buffer keeps the stack
  // below on fewer pages (docs/decisions/first-touched-pages.md).
  std::string in;
  char buf[2048];
  while (in.size() <= conf::kMaxConfigBytes) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  std::string out;
  int rc = cni::Run([](const char* name) { return std::getenv(name); }, in, out);
  base::phase::Begin("output");
  WriteAll(STDOUT_FILENO, out);
  if (base::phase::Enabled()) WriteAll(STDERR_FILENO, base::phase::Report());
  return rc;
}

// erdma-cni-install: puts erdma-cni on a node (install/installer.h).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cni/driver/registry.h"
#include "install/installer.h"
#include "install/options.h"

int main(int argc, char** argv) {
  try {
    auto opts = install::ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
    if (!opts.ok()) {
      std::cerr << "erdma-cni-install: " << opts.error().msg << "\n";
      return install::kExitUsage;
    }
    opts->modes = cni::Modes();
    return install::Run(*opts, std::cout, std::cerr);
  } catch (const std::exception& e) {
    // A bug; every file write before it was whole (temp + rename).
    std::cerr << "erdma-cni-install: internal error: " << e.what() << "\n";
    return install::kExitFailed;
  }
}

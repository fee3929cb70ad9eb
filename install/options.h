// The installer's command line, parsed into one value; no I/O.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "conf/modes.h"
#include "install/conflist.h"

namespace install {

enum class Command { kInstall, kUninstall, kCheck, kHelp, kVersion };

struct Options {
  Command command = Command::kHelp;
  std::string bin_dir = "/opt/cni/bin";
  std::string conf_dir = "/etc/cni/net.d";
  std::string conflist = "auto";  ///< a file name in conf_dir, or "auto": the file the runtime reads first
  Placement placement;            ///< default: last
  std::string entry_file;         ///< empty: DefaultEntry()
  std::string source;             ///< empty: the erdma-cni next to the installer, else the packaged one
  /// The node file the entry's dataDir and logFile are checked against; empty: where the plugin reads it
  /// ($ERDMA_CNI_NODE_CONFIG, else /etc/erdma-cni/node.json, absent: the built-in defaults).
  std::string node_config;
  /// install: the node file to put in place at node_config's path (the DaemonSet's ConfigMap), validated
  /// first; check: that path must hold it. Empty: the node's own file is left as it is.
  std::string node_file;
  bool dry_run = false;
  bool remove_binary = false;  ///< uninstall: also remove bin_dir/erdma-cni
  unsigned every_seconds = 0;  ///< install: repeat every N seconds until SIGTERM (0: once)
  /// Not an argument: the plugin's modes (cni::Modes()), for parsing an entry as the plugin does.
  conf::ModeTable modes;
};

/// Parses argv[1..]: `--key value` or `--key=value`, each command only its own. Code 7 with a message.
base::Result<Options> ParseArgs(const std::vector<std::string>& args);

/// The --help text.
std::string Usage();

}  // namespace install

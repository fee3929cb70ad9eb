#include "install/options.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace install {
namespace {

using base::Code;
using base::Error;

Error UsageError(std::string msg) { return Error(Code::kInvalidConfig, std::move(msg) + " (see --help)"); }

bool ParseCount(std::string_view s, uint64_t max, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out <= max;
}

// Each option: whether it takes a value, the commands that accept it, and the member its value goes to as
// it is (once checked), if any.
struct Accepted {
  bool takes_value;
  std::set<Command> commands;
  std::string Options::*field;
};
const std::map<std::string_view, Accepted> kAccepted = {
    {"--bin-dir", {true, {Command::kInstall, Command::kUninstall, Command::kCheck}, &Options::bin_dir}},
    {"--conf-dir", {true, {Command::kInstall, Command::kUninstall, Command::kCheck}, &Options::conf_dir}},
    {"--conflist", {true, {Command::kInstall, Command::kUninstall, Command::kCheck}, &Options::conflist}},
    {"--after", {true, {Command::kInstall, Command::kCheck}, nullptr}},
    {"--position", {true, {Command::kInstall, Command::kCheck}, nullptr}},
    {"--last", {false, {Command::kInstall, Command::kCheck}, nullptr}},
    {"--entry", {true, {Command::kInstall, Command::kCheck}, &Options::entry_file}},
    {"--source", {true, {Command::kInstall, Command::kCheck}, &Options::source}},
    {"--node-config", {true, {Command::kInstall, Command::kCheck}, &Options::node_config}},
    {"--node-file", {true, {Command::kInstall, Command::kCheck}, &Options::node_file}},
    {"--dry-run", {false, {Command::kInstall, Command::kUninstall}, nullptr}},
    {"--remove-binary", {false, {Command::kUninstall}, nullptr}},
    {"--every", {true, {Command::kInstall}, nullptr}},
};

// Each command's names, the one messages use first.
constexpr std::pair<std::string_view, Command> kCommands[] = {
    {"install", Command::kInstall},  {"uninstall", Command::kUninstall},
    {"check", Command::kCheck},      {"--help", Command::kHelp},
    {"-h", Command::kHelp},          {"help", Command::kHelp},
    {"--version", Command::kVersion}};

std::string_view CommandName(Command c) {
  return std::find_if(std::begin(kCommands), std::end(kCommands),
                      [&](const auto& n) { return n.second == c; })
      ->first;
}

}  // namespace

base::Result<Options> ParseArgs(const std::vector<std::string>& args) {
  Options o;
  if (args.empty()) return UsageError("no command: install, uninstall or check");
  const std::string& cmd = args[0];
  const auto* named =
      std::find_if(std::begin(kCommands), std::end(kCommands), [&](const auto& n) { return n.first == cmd; });
  if (named == std::end(kCommands))
    return UsageError("unknown command \"" + cmd + "\": install, uninstall or check");
  o.command = named->second;
  if ((o.command == Command::kHelp || o.command == Command::kVersion) && args.size() > 1)
    return UsageError(cmd + " takes no arguments");

  int placements = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (flag == "--help" || flag == "-h") {
      o.command = Command::kHelp;
      return o;
    }
    auto accepted = kAccepted.find(flag);
    if (accepted == kAccepted.end()) return UsageError("unknown option \"" + flag + "\"");
    if (!accepted->second.commands.contains(o.command))
      return UsageError(flag + " is not an option of " + std::string(CommandName(o.command)));
    if (accepted->second.takes_value) {
      if (!value) {
        if (i + 1 >= args.size()) return UsageError(flag + " needs a value");
        value = args[++i];
      }
    } else if (value) {
      return UsageError(flag + " takes no value");
    }

    placements += flag == "--after" || flag == "--position" || flag == "--last";
    if (flag == "--bin-dir" || flag == "--conf-dir") {
      if (value->empty() || (*value)[0] != '/')
        return UsageError(flag + ": must be an absolute directory, got \"" + *value + "\"");
    } else if (flag == "--conflist") {
      if (value->empty() || value->find('/') != std::string::npos || *value == "." || *value == "..")
        return UsageError("--conflist: a file name in --conf-dir (or auto), got \"" + *value + "\"");
      if (*value != "auto" && !value->ends_with(".conflist"))
        return UsageError(
            "--conflist: \"" + *value +
            "\" does not end in .conflist; runtimes read only *.conflist files as plugin chains");
    } else if (flag == "--after") {
      if (value->empty()) return UsageError("--after: needs a plugin type, e.g. terway");
      o.placement = {Placement::Kind::kAfter, *value, 0};
    } else if (flag == "--position") {
      uint64_t n = 0;
      if (!ParseCount(*value, 1000, &n))
        return UsageError("--position: a number 0..1000, got \"" + *value + "\"");
      o.placement = {Placement::Kind::kIndex, "", static_cast<size_t>(n)};
    } else if (flag == "--last") {
      o.placement = {Placement::Kind::kLast, "", 0};
    } else if (flag == "--node-config") {
      if (value->empty() || (*value)[0] != '/')
        return UsageError("--node-config: must be the absolute path of the node file, got \"" + *value +
                          "\"");
    } else if (flag == "--node-file") {
      if (value->empty()) return UsageError("--node-file: needs the node file to put in place");
    } else if (flag == "--every") {
      uint64_t n = 0;
      if (!ParseCount(*value, 86400, &n) || n == 0)
        return UsageError("--every: seconds 1..86400, got \"" + *value + "\"");
      o.every_seconds = static_cast<unsigned>(n);
    } else if (flag == "--dry-run") {
      o.dry_run = true;
    } else if (flag == "--remove-binary") {
      o.remove_binary = true;
    }
    if (accepted->second.field) o.*accepted->second.field = *value;
  }
  if (placements > 1) return UsageError("--after, --position and --last exclude each other");
  if (o.dry_run && o.every_seconds) return UsageError("--dry-run and --every exclude each other");
  return o;
}

std::string Usage() {
  return R"(usage: erdma-cni-install COMMAND [OPTIONS]

Puts erdma-cni on a node: the plugin binary into the CNI bin dir and an
erdma-cni entry into the node's conflist (chained after the primary plugin).
Every write is a temp file + fsync + rename; a run that changes nothing writes
nothing. Safe to run at every start.

commands:
  install     copy the plugin (only when it differs) and insert or update the
              erdma-cni entry; keeps the previous conflist in
              <conflist>.erdma-cni.bak when it changes it. An entry with
              device.resource goes in only while the kubelet's pod-resources
              socket (the node file's) answers; otherwise it is taken out
              and install fails, naming the socket
  uninstall   take every erdma-cni entry out of the conflist (nothing else
              changes); the binary stays unless --remove-binary
  check       exit 0 when the binary and the entry are as install would make
              them, 1 (saying what differs) when not

options:
  --bin-dir DIR        CNI bin dir (default /opt/cni/bin)
  --conf-dir DIR       CNI config dir (default /etc/cni/net.d)
  --conflist NAME      the conflist in --conf-dir, e.g. 10-terway.conflist;
                       auto (default): the file the runtime reads first (the
                       first *.conf, *.conflist or *.json by name), which must
                       be a .conflist
  --after TYPE         put the entry right after the (last) plugin of this type
  --position N         put the entry at index N of the chain (0 is first)
  --last               put the entry at the end (default)
  --entry FILE         the erdma-cni entry (JSON object with "type": "erdma-cni");
                       default: mode none with the pod-annotations capability
  --source PATH        the plugin binary to copy; default: the erdma-cni next to
                       this program, else /opt/cni/bin/erdma-cni (the package's)
  --node-config FILE   the node file the entry's dataDir and logFile must be
                       allowed by; default: the plugin's ($ERDMA_CNI_NODE_CONFIG,
                       else /etc/erdma-cni/node.json; absent: built-in defaults)
  --node-file FILE     install: put FILE (e.g. the DaemonSet's ConfigMap) in place
                       as that node file, root's, 0644, once it parses as the
                       plugin parses it, before the binary and the entry; check:
                       the node file must hold it
  --dry-run            say what would change and print the new conflist; write nothing
  --remove-binary      uninstall: also remove <bin-dir>/erdma-cni
  --every SECONDS      install: run again every SECONDS until SIGTERM (repairs
                       the entry when the primary plugin rewrites its conflist)
  --help, --version

exit status: 0 done (check: installed as asked), 1 failed or (check) differs,
2 usage error. A failed run changes nothing, but for taking out an entry
whose kubelet does not answer.
)";
}

}  // namespace install

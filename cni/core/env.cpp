#include "cni/core/env.h"

#include <sys/stat.h>

#include <iterator>
#include <set>
#include <utility>

#include "conf/names.h"

namespace cni {
namespace {

using base::Code;
using base::Error;

constexpr const char* kCommands = "ADD, DEL, CHECK, VERSION, GC, STATUS";
// CNI_COMMAND's values, in the order of enum Command.
constexpr const char* kCommandNames[] = {"ADD", "DEL", "CHECK", "VERSION", "GC", "STATUS"};

Error InvalidEnv(std::string msg) { return Error(Code::kInvalidEnv, std::move(msg)); }

/// The variable's value, or nullopt when unset. An empty value counts as set.
std::optional<std::string> Lookup(const Getenv& getenv, const char* name) {
  const char* v = getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

base::Result<Command> ParseCommand(const Getenv& getenv) {
  auto v = Lookup(getenv, "CNI_COMMAND");
  if (!v || v->empty()) return InvalidEnv(std::string("CNI_COMMAND: missing; must be one of ") + kCommands);
  for (size_t i = 0; i < std::size(kCommandNames); ++i)
    if (*v == kCommandNames[i]) return static_cast<Command>(i);
  return InvalidEnv("CNI_COMMAND: " + Quoted(*v) + " is not supported; must be one of " + kCommands);
}

base::Result<std::vector<std::string>> ParsePath(const std::optional<std::string>& v) {
  std::vector<std::string> out;
  if (!v) return out;  // the spec requires it, but we exec nothing without IPAM
  std::string_view rest = *v;
  for (;;) {
    const size_t colon = rest.find(':');
    std::string_view entry = rest.substr(0, colon);
    if (!entry.empty()) {  // "a::b" and a trailing ':' are harmless
      if (entry[0] != '/' || conf::HasControlChar(entry))
        return InvalidEnv("CNI_PATH: entry " + Quoted(entry) +
                          " must be an absolute directory; separate entries with ':'");
      // A missing directory is harmless (runtimes list several); something else there is not.
      struct stat st {};
      if (::stat(std::string(entry).c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        return InvalidEnv(
            "CNI_PATH: entry " + Quoted(entry) +
            " is not a directory; list the directories that hold CNI plugins, separated by ':'");
      out.emplace_back(entry);
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

}  // namespace

const char* CommandName(Command c) { return kCommandNames[static_cast<size_t>(c)]; }

std::string Env::PodName() const {
  auto ns = args.find("K8S_POD_NAMESPACE");
  auto name = args.find("K8S_POD_NAME");
  if (ns == args.end() || name == args.end() || ns->second.empty() || name->second.empty()) return "";
  return ns->second + "/" + name->second;
}

base::Result<std::map<std::string, std::string>> ParseCniArgs(std::string_view text) {
  std::map<std::string, std::string> out;
  size_t index = 0;
  for (;;) {
    const size_t semi = text.find(';');
    std::string_view part = text.substr(0, semi);
    if (!part.empty()) {  // tolerate "a=1;;b=2" and a trailing ';'
      const size_t eq = part.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return InvalidEnv("CNI_ARGS: part " + std::to_string(index) + " " + Quoted(part) +
                          " must be KEY=VALUE with a non-empty key; separate pairs with ';'");
      // The value may itself hold '=' (base64, selectors); split at the first.
      out[std::string(part.substr(0, eq))] = std::string(part.substr(eq + 1));
    }
    ++index;
    if (semi == std::string_view::npos) break;
    text.remove_prefix(semi + 1);
  }
  return out;
}

base::Result<Env> ParseEnv(const Getenv& getenv) {
  Env env;
  ASSIGN_OR_RETURN(env.command, ParseCommand(getenv));
  // VERSION needs nothing else; GC and STATUS act on the network: only CNI_PATH matters to them.
  if (env.command == Command::kVersion) return env;
  ASSIGN_OR_RETURN(env.path, ParsePath(Lookup(getenv, "CNI_PATH")));
  if (env.command == Command::kGc || env.command == Command::kStatus) return env;

  const bool needs_netns = env.command != Command::kDel;

  auto id = Lookup(getenv, "CNI_CONTAINERID");
  if (!id || id->empty()) return InvalidEnv("CNI_CONTAINERID: missing; the runtime must set it");
  // ADD takes only IDs whose state file name fits NAME_MAX; the others accept older builds' IDs.
  const size_t max_id =
      env.command == Command::kAdd ? conf::kMaxContainerIdBytes : conf::kMaxLegacyContainerIdBytes;
  if (!conf::IsValidContainerId(*id, max_id))
    return InvalidEnv("CNI_CONTAINERID: " + Quoted(id->size() > 300 ? id->substr(0, 300) + "..." : *id) +
                      " must be at most " + std::to_string(max_id) +
                      " bytes of [A-Za-z0-9_.-], starting with a letter or digit, without \"..\" (" +
                      std::to_string(id->size()) + " bytes given; the ID names erdma-cni's state file)");
  env.container_id = *id;

  auto netns = Lookup(getenv, "CNI_NETNS");
  if (netns && !netns->empty()) {
    if (!conf::IsValidNetnsPath(*netns))
      return InvalidEnv("CNI_NETNS: " + Quoted(*netns) +
                        " must be an absolute path (in UTF-8) to a network namespace");
    env.netns = *netns;
  } else if (needs_netns) {
    return InvalidEnv("CNI_NETNS: missing; the runtime must set the container's netns path");
  }

  auto ifname = Lookup(getenv, "CNI_IFNAME");
  if (!ifname || ifname->empty()) return InvalidEnv("CNI_IFNAME: missing; the runtime must set it");
  if (!conf::IsValidIfName(*ifname))
    return InvalidEnv("CNI_IFNAME: " + Quoted(*ifname) +
                      " must be an interface name: 1..15 bytes of UTF-8, no '/', ':' or whitespace, "
                      "not \".\" or \"..\"");
  env.ifname = *ifname;

  if (auto a = Lookup(getenv, "CNI_ARGS")) {
    ASSIGN_OR_RETURN(env.args, ParseCniArgs(*a));
  }
  // An unknown key is an error unless IgnoreUnknown is set; ADD only, as DEL must always finish.
  if (env.command == Command::kAdd) {
    auto ignore = env.args.find("IgnoreUnknown");
    const bool lenient = ignore != env.args.end() && (ignore->second == "1" || ignore->second == "true" ||
                                                      ignore->second == "True" || ignore->second == "TRUE");
    static const std::set<std::string> kKnown = {"IgnoreUnknown",
                                                 "K8S_POD_NAMESPACE",
                                                 "K8S_POD_NAME",
                                                 "K8S_POD_INFRA_CONTAINER_ID",
                                                 "K8S_POD_UID",
                                                 "MAC",
                                                 "IP"};
    for (const auto& [key, value] : env.args)
      if (!lenient && !kKnown.contains(key))
        return InvalidEnv("CNI_ARGS: unknown key " + Quoted(key) +
                          "; erdma-cni reads K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_INFRA_CONTAINER_ID, "
                          "K8S_POD_UID, MAC and IP; add IgnoreUnknown=1 to pass others");
  }
  return env;
}

}  // namespace cni

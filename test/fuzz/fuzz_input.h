// The fuzz input format: CNI invocations in a row, run against the same
// in-memory node, and between them the other inputs erdma-cni reads: files
// in its data dir (state files, claims, shares), what an IPAM plugin prints,
// and node conflists for the installer.
//
//   input      := section ("\n%%\n" section)*       at most kMaxSections
//   section    := invocation | inject
//   invocation := env-line* "\n" stdin                an empty line ends the env
//   env-line   := NAME "=" VALUE "\n"                 lines without '=' are ignored
//   inject     := "@" KIND [" " ARG] "\n" bytes
//
// Injections (any other KIND is ignored):
//   @file PATH   `bytes` become the file PATH under the data dir before the
//                next invocation runs: "erdma/<state name>", "devices/eth1",
//                "children/eth1/<share>". PATH is 1..4 components of
//                [A-Za-z0-9._@%-] (state names are "@<cid>@<ifname>"), none
//                "." or ".."; anything else is dropped.
//                Directories are made 0700, the file 0600, never through a link.
//   @ipam [EXIT] what every IPAM plugin prints for ADD from now on, and its
//                exit status (0..255, default 0), read by the plugin's own
//                ipam::ReadOutput.
//   @conflist    `bytes` given to the installer's conflist edit (install/conflist.h).
//   @nri [CHUNK] `bytes` as the NRI agent's trunk (nri/frame.h), fed to its
//                demultiplexer CHUNK bytes at a time (1..65536, default all).
//
// A value ends at its first NUL byte, as execve(2) would cut it. Variables
// named FUZZ_* in the first invocation section shape the node (see fuzz_node.h) and
// are not passed to the plugin. With no empty line the whole invocation is
// environment and stdin is empty. Seeds in test/fuzz/corpus/ are readable
// text in this format.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

inline constexpr size_t kMaxInvocations = 8;
inline constexpr size_t kMaxSections = 16;

struct Invocation {
  std::map<std::string, std::string> env;
  std::string stdin_bytes;
};

struct Section {
  enum class Kind { kInvocation, kFile, kIpam, kConflist, kNri };
  Kind kind = Kind::kInvocation;
  Invocation invocation;  ///< kInvocation
  std::string arg;        ///< kFile: the checked path; kIpam: the exit status text; kNri: the chunk size
  std::string bytes;      ///< the injected bytes
};

/// Splits `data` into sections (never more than kMaxSections, of them at
/// most kMaxInvocations invocations; the rest is dropped).
std::vector<Section> ParseInput(std::string_view data);

/// Whether `path` is a data dir path an @file section may name.
bool SafeDataPath(std::string_view path);

}  // namespace fuzz

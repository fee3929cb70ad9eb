// The node conflist edit, as pure functions over text: parse, check the shape the runtime needs, put
// erdma-cni's entry where it was asked (or take it out), render in the file's own layout. No file I/O here.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace install {

/// Insertion-ordered, so every other entry and key is written back in the order it was read.
using Json = nlohmann::ordered_json;

/// Our entries are the ones of this type; nothing else identifies them.
inline constexpr const char* kPluginType = "erdma-cni";

/// Where our entry goes, counted among the other entries (ours left out).
struct Placement {
  enum class Kind { kLast, kAfter, kIndex };
  Kind kind = Kind::kLast;
  std::string after_type;  ///< kAfter: right after the last entry of this type
  size_t index = 0;        ///< kIndex: 0 is the first entry of the chain
  std::string Describe() const;
};

/// Parses JSON text into an object. Code 6, saying where, for no JSON, no object, a NUL byte, nesting deeper
/// than base::kMaxJsonDepth, or a key twice in one object at any depth (a rewrite would keep one).
base::Result<Json> ParseObject(std::string_view text);

/// How many entries of `plugins` are ours.
size_t CountOurs(const Json& doc);

/// The shape the runtime needs: `cniVersion` and `name` strings, `plugins` a non-empty array of objects each
/// with a string `type`, and `ours` entries of type erdma-cni (nullopt: any number). A single-plugin config
/// (a `.conf`) is named as such. Code 7; the message says what is wrong and how to fix it.
base::Status Validate(const Json& doc, std::optional<size_t> ours);

/// `doc` with every erdma-cni entry taken out; everything else as it was.
Json WithoutOurs(const Json& doc);

/// What an install or uninstall would do to one conflist.
struct Edit {
  bool changed = false;  ///< false: the file already holds what was asked (by value)
  Json doc;              ///< the result
  std::string text;      ///< the result rendered, when changed
  std::string summary;   ///< one line for the operator
};

/// Validates `original` (at most one entry of ours), puts `entry` (of ours) at `where`, validates the result.
base::Result<Edit> PlanInstall(std::string_view original, const Json& entry, const Placement& where);

/// Takes every erdma-cni entry out of `original`; refuses to leave a conflist with no plugins.
base::Result<Edit> PlanUninstall(std::string_view original);

}  // namespace install

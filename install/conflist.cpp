#include "install/conflist.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "base/json_parse.h"
#include "conf/version.h"

namespace install {
namespace {

using base::Code;
using base::Error;

Error Invalid(std::string msg) { return Error(Code::kInvalidConfig, std::move(msg)); }

// The entry's "type", or null when it has no string one.
const std::string* TypeOf(const Json& plugin) {
  auto it = plugin.is_object() ? plugin.find("type") : plugin.end();
  return it != plugin.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

bool IsOurs(const Json& plugin) {
  const std::string* type = TypeOf(plugin);
  return type && *type == kPluginType;
}

// Positions of our entries in `plugins` (empty when `plugins` is not an array).
std::vector<size_t> OurPositions(const Json& doc) {
  std::vector<size_t> at;
  auto it = doc.find("plugins");
  if (it == doc.end() || !it->is_array()) return at;
  for (size_t i = 0; i < it->size(); ++i)
    if (IsOurs((*it)[i])) at.push_back(i);
  return at;
}

std::string List(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i : v) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s;
}

std::string Types(const Json& plugins) {
  std::string s;
  for (const Json& p : plugins) s += (s.empty() ? "" : ", ") + (TypeOf(p) ? *TypeOf(p) : "?");
  return s;
}

// The indent unit of `text`: the whitespace that starts its second line. nullopt when the text is one line.
std::optional<std::pair<int, char>> IndentOf(std::string_view text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  size_t nl = text.substr(0, end).find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  char c = ' ';
  int n = 0;
  for (size_t i = nl + 1; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i, ++n) c = text[i];
  return std::make_pair(n, c);
}

// `doc` with `entry` at `where`, no other of ours; code 7 for a type not in the chain or an index past its
// end.
base::Result<Json> WithEntry(const Json& doc, const Json& entry, const Placement& where) {
  Json out = WithoutOurs(doc);
  auto it = out.find("plugins");
  if (it == out.end() || !it->is_array()) return Invalid("plugins: missing or not an array");
  Json& plugins = *it;
  size_t pos = plugins.size();
  switch (where.kind) {
    case Placement::Kind::kLast: break;
    case Placement::Kind::kAfter: {
      std::optional<size_t> found;
      for (size_t i = 0; i < plugins.size(); ++i)
        if (const std::string* type = TypeOf(plugins[i]); type && *type == where.after_type) found = i;
      if (!found)
        return Invalid("no plugin of type \"" + where.after_type + "\" in the chain (its types: " +
                       Types(plugins) + "); name one of them with --after, or use --position N or --last");
      pos = *found + 1;
      break;
    }
    case Placement::Kind::kIndex:
      if (where.index > plugins.size())
        return Invalid("position " + std::to_string(where.index) + " is past the end: the chain has " +
                       std::to_string(plugins.size()) + " other entries (positions 0.." +
                       std::to_string(plugins.size()) + "); use --last to append");
      pos = where.index;
      break;
  }
  plugins.insert(plugins.begin() + static_cast<std::ptrdiff_t>(pos), entry);
  return out;
}

// `doc` in the layout of `original`: the same indent unit (or one line) and the same final newline.
std::string Render(const Json& doc, std::string_view original) {
  auto indent = IndentOf(original);
  std::string text = indent ? doc.dump(indent->first, indent->second) : doc.dump();
  size_t last = original.find_last_not_of(" \t\r");
  if (last != std::string_view::npos && original[last] == '\n') text += '\n';
  return text;
}

}  // namespace

std::string Placement::Describe() const {
  switch (kind) {
    case Kind::kLast: return "last";
    case Kind::kAfter: return "after " + after_type;
    case Kind::kIndex: return "at position " + std::to_string(index);
  }
  return "?";
}

base::Result<Json> ParseObject(std::string_view text) {
  // The depth bound first: a deeply nested conflist would overflow the stack when copied or dumped.
  if (auto bounded = base::ParseJson(text, "the conflist"); !bounded.ok()) {
    // A syntax error in the parser's own words (they give the line), else as ParseJson says it.
    const Error& e = bounded.error();
    return e.details.empty() ? e : Error(Code::kDecoding, "not JSON: " + e.details);
  }
  // The parser keeps the last of two equal keys, which a rewrite would drop silently.
  std::vector<std::set<std::string>> open;
  std::optional<std::string> duplicate;
  Json::parser_callback_t cb = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open.emplace_back(); break;
      case Json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second && !duplicate)
          duplicate = parsed.get<std::string>();
        break;
      default: break;
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text, cb);
  } catch (const Json::exception& e) {
    return Error(Code::kDecoding, std::string("not JSON: ") + e.what());
  }
  if (duplicate) return Error(Code::kDecoding, "the key \"" + *duplicate + "\" appears twice in one object");
  if (!doc.is_object())
    return Error(Code::kDecoding, std::string("not a JSON object but ") + doc.type_name());
  return doc;
}

size_t CountOurs(const Json& doc) { return OurPositions(doc).size(); }

base::Status Validate(const Json& doc, std::optional<size_t> ours) {
  auto plugins = doc.find("plugins");
  if (plugins == doc.end()) {
    auto type = doc.find("type");
    if (type != doc.end() && type->is_string())
      return Invalid("a single-plugin config (type \"" + type->get<std::string>() +
                     "\"), not a list: nothing can be chained into it. Turn it into a .conflist "
                     "({\"cniVersion\", \"name\", \"plugins\": [the plugin]}) and install into that");
    return Invalid("plugins: missing; a conflist is {\"cniVersion\", \"name\", \"plugins\": [...]}");
  }
  auto version = doc.find("cniVersion");
  if (version == doc.end() || !version->is_string())
    return Invalid("cniVersion: missing or not a string; the runtime needs it (e.g. \"1.0.0\")");
  auto name = doc.find("name");
  if (name == doc.end() || !name->is_string() || name->get<std::string>().empty())
    return Invalid("name: missing or not a non-empty string; the runtime needs the network name");
  if (!plugins->is_array()) return Invalid("plugins: must be an array of plugin entries");
  if (plugins->empty()) return Invalid("plugins: empty; the runtime refuses a conflist with no plugins");
  for (size_t i = 0; i < plugins->size(); ++i) {
    const Json& p = (*plugins)[i];
    const std::string at = "plugins[" + std::to_string(i) + "]";
    if (!p.is_object()) return Invalid(at + ": must be an object");
    auto type = p.find("type");
    if (type == p.end() || !type->is_string() || type->get<std::string>().empty())
      return Invalid(at + ": has no \"type\" string; the runtime cannot run it");
  }
  if (!ours) return base::Ok();
  auto at = OurPositions(doc);
  if (at.size() > 1 && *ours <= 1)
    return Invalid("plugins: " + std::to_string(at.size()) + " entries of type erdma-cni (at " + List(at) +
                   "), which one to keep is ambiguous: remove all but one by hand, or run "
                   "`erdma-cni-install uninstall` (it removes them all) and install again");
  if (at.size() != *ours)
    return Invalid("plugins: " + std::to_string(at.size()) + " entries of type erdma-cni, expected " +
                   std::to_string(*ours));
  return base::Ok();
}

Json WithoutOurs(const Json& doc) {
  Json out = doc;
  auto it = out.find("plugins");
  if (it == out.end() || !it->is_array()) return out;
  Json kept = Json::array();
  for (Json& p : *it)
    if (!IsOurs(p)) kept.push_back(std::move(p));
  *it = std::move(kept);
  return out;
}

base::Result<Edit> PlanInstall(std::string_view original, const Json& entry, const Placement& where) {
  if (!IsOurs(entry)) return Invalid("the entry to install must be an object with \"type\": \"erdma-cni\"");
  ASSIGN_OR_RETURN(Json doc, ParseObject(original));
  RETURN_IF_ERROR(Validate(doc, std::min<size_t>(CountOurs(doc), 1)));
  const std::string version = doc["cniVersion"].get<std::string>();
  if (!conf::IsSupportedVersion(version))
    return Invalid("cniVersion \"" + version + "\": erdma-cni speaks " + conf::SupportedVersions().front() +
                   " to " + conf::SupportedVersions().back() +
                   "; every ADD would fail. Raise the conflist's cniVersion first");
  const std::vector<size_t> before = OurPositions(doc);
  ASSIGN_OR_RETURN(Json out, WithEntry(doc, entry, where));
  if (auto s = Validate(out, 1); !s.ok()) return std::move(s).error().WithContext("the result");
  Edit edit;
  const size_t after = OurPositions(out).front();
  const std::string at = "position " + std::to_string(after) + " (" + where.Describe() + ")";
  edit.changed = out != doc;
  if (!edit.changed)
    edit.summary = "erdma-cni entry up to date at " + at;
  else if (before.empty())
    edit.summary = "inserted the erdma-cni entry at " + at;
  else if (before.front() != after)
    edit.summary = "moved the erdma-cni entry from position " + std::to_string(before.front()) + " to " + at;
  else
    edit.summary = "updated the erdma-cni entry at " + at;
  if (edit.changed) edit.text = Render(out, original);
  edit.doc = std::move(out);
  return edit;
}

base::Result<Edit> PlanUninstall(std::string_view original) {
  ASSIGN_OR_RETURN(Json doc, ParseObject(original));
  // Several entries of ours are fine here: removing them all is the fix.
  RETURN_IF_ERROR(Validate(doc, std::nullopt));
  auto at = OurPositions(doc);
  Edit edit;
  if (at.empty()) {
    edit.summary = "no erdma-cni entry";
    edit.doc = std::move(doc);
    return edit;
  }
  Json out = WithoutOurs(doc);
  if (out["plugins"].empty())
    return Invalid(
        "erdma-cni is the only plugin; without it the runtime would refuse the conflist. Delete "
        "the file instead if that is what you want");
  if (auto s = Validate(out, 0); !s.ok()) return std::move(s).error().WithContext("the result");
  edit.changed = true;
  edit.summary = at.size() == 1 ? "removed the erdma-cni entry at position " + List(at)
                                : "removed " + std::to_string(at.size()) + " erdma-cni entries (positions " +
                                      List(at) + ")";
  edit.text = Render(out, original);
  edit.doc = std::move(out);
  return edit;
}

}  // namespace install

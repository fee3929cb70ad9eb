#include "conf/keys.h"

#include <algorithm>
#include <cctype>

#include "conf/fields.h"
#include "conf/names.h"

namespace conf {
namespace {

// Optimal string alignment: edits, and swaps of two neighbours ("mdoe").
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// A key as a person reads it: plain keys bare, anything else quoted so that
// control characters never reach a terminal raw.
// One longer than any key is cut, its length said: a config's 1 MB key is not echoed whole.
std::string Shown(std::string_view key) {
  constexpr size_t kShownKeyBytes = 64;
  if (key.size() > kShownKeyBytes)
    return Quote(key.substr(0, kShownKeyBytes)) + "... (" + std::to_string(key.size()) + " bytes)";
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/';
  });
  return plain ? std::string(key) : Quote(key);
}

std::string PathOf(const Level& level, std::string_view key) {
  return level.path.empty() ? Shown(key) : std::string(level.path) + "." + Shown(key);
}

std::string Accepted(const Level& level) {
  std::string out;
  for (size_t i = 0; i < level.keys.size(); ++i) {
    if (i > 0) out += i + 1 == level.keys.size() ? " and " : ", ";
    out += level.keys[i];
  }
  return out;
}

}  // namespace

std::string_view NearestKey(std::string_view key, const Level& level) {
  // Keys are short; a third of the length (at least one edit) separates a typo from another word.
  if (key.size() > 64) return {};  // no key is that long, and the distance is quadratic
  const std::string k = AsciiLower(key);
  std::string_view best;
  size_t best_d = std::max<size_t>(1, k.size() / 3) + 1;
  for (std::string_view candidate : level.keys) {
    const size_t d = Distance(k, AsciiLower(candidate));
    if (d < best_d) {
      best_d = d;
      best = candidate;
    }
  }
  return best;
}

std::vector<std::string> UnknownKeys(const nlohmann::json& obj, const Level& level) {
  std::vector<std::string> out;
  if (!obj.is_object()) return out;
  for (const auto& [key, value] : obj.items()) {
    if (value.is_null() || std::find(level.keys.begin(), level.keys.end(), key) != level.keys.end()) continue;
    std::string msg = PathOf(level, key) + ": not a key of erdma-cni";
    if (!level.path.empty()) msg += "'s " + std::string(level.path);
    if (std::string_view near = NearestKey(key, level); !near.empty())
      msg += "; did you mean " + PathOf(level, near) + "? Correct it or remove it";
    else
      msg += ", which takes " + Accepted(level) + "; remove it";
    out.push_back(std::move(msg));
  }
  return out;
}

base::Status RefuseUnknown(const nlohmann::json& obj, const Level& level) {
  std::vector<std::string> unknown = UnknownKeys(obj, level);
  if (unknown.empty()) return base::Ok();
  return Invalid(std::move(unknown.front()));
}

}  // namespace conf

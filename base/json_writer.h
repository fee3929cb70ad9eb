// JSON text written directly, without a nlohmann tree: for erdma-cni's own
// records of a fixed shape (the state file), where building the tree cost
// more than the syscalls around it (docs/performance.md, fix 4). The text
// parses back with nlohmann::json::parse; members come out in the order
// they are written.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace base {

class JsonWriter {
 public:
  /// `{`, `}`, `[`, `]`; a member of an object starts with Key.
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);

  /// Values. Str escapes as nlohmann::json::dump does; a string with bytes
  /// above 0x7f goes through nlohmann, which rejects invalid UTF-8 the same way.
  JsonWriter& Str(std::string_view s);
  JsonWriter& Uint(uint64_t n);
  JsonWriter& Int(int64_t n);
  JsonWriter& Bool(bool b);
  /// A value that already is a tree (an IPAM config, a CNI result): its dump().
  JsonWriter& Json(const nlohmann::json& j);

  /// Key and value in one: writer.Str("name", s).
  JsonWriter& Str(std::string_view key, std::string_view s) { return Key(key).Str(s); }
  JsonWriter& Uint(std::string_view key, uint64_t n) { return Key(key).Uint(n); }
  JsonWriter& Int(std::string_view key, int64_t n) { return Key(key).Int(n); }
  JsonWriter& Bool(std::string_view key, bool b) { return Key(key).Bool(b); }
  JsonWriter& Json(std::string_view key, const nlohmann::json& j) { return Key(key).Json(j); }

  /// The text so far (complete once every Begin has its End).
  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);
  void Escaped(std::string_view s);

  std::string out_;
  std::vector<bool> empty_;  ///< per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace base

// JsonFields: one definition of a record's members that both writes and reads it.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "netlink/ip.h"

namespace cni {

/// Writing puts each member into `out` (a tree) or JSON text (Text); reading takes each from `in`, naming the
/// first that is missing or mistyped (kState).
class JsonFields {
 public:
  explicit JsonFields(nlohmann::json& out) : out_(&out) {}
  explicit JsonFields(const nlohmann::json& in) : in_(&in) {}
  /// The JSON text of the object `members` writes, its keys in the order `members` names them.
  static std::string Text(const std::function<void(JsonFields&)>& members);
  bool reading() const { return in_ != nullptr; }
  const base::Status& status() const { return status_; }
  void Fail(base::Error e) {
    if (status_.ok()) status_ = std::move(e);
  }
  /// Fails with kState "state: <what>".
  void Refuse(const std::string& what);
  JsonFields& operator()(const char* key, std::string& v);
  JsonFields& operator()(const char* key, uint64_t& v);
  JsonFields& operator()(const char* key, uint32_t& v);
  JsonFields& operator()(const char* key, uint8_t& v);
  JsonFields& operator()(const char* key, int& v);
  JsonFields& operator()(const char* key, bool& v);
  JsonFields& operator()(const char* key, nlohmann::json& v);
  JsonFields& operator()(const char* key, netlink::IpPrefix& v);
  JsonFields& operator()(const char* key, netlink::IpAddress& v);
  JsonFields& operator()(const char* key, std::vector<std::string>& v);
  /// Present when set; absent reads as nullopt.
  template <class V>
  JsonFields& operator()(const char* key, std::optional<V>& v) {
    if (Has(key, v.has_value())) (*this)(key, reading() ? v.emplace() : *v);
    return *this;
  }
  /// A nested record: one with its own Fields().
  template <class V>
  requires requires(JsonFields& f, V& v) { Fields(f, v); }
  JsonFields& operator()(const char* key, V& v) {
    Nested(key, [&v](JsonFields& f) { Fields(f, v); });
    return *this;
  }
  template <class V>
  requires requires(JsonFields& f, V& v) { Fields(f, v); }
  JsonFields& operator()(const char* key, std::vector<V>& v) {
    NestedArray(key, v.size(), [&v](JsonFields& f, size_t i) {
      if (f.reading()) v.emplace_back();
      Fields(f, v[i]);
    });
    return *this;
  }
  /// A member holding an array of records, `each` giving (or reading) the i-th's members.
  void Records(const char* key, size_t n, const std::function<void(JsonFields&, size_t)>& each) {
    NestedArray(key, n, each);
  }
  /// Writing: `present`; reading: whether `key` is there.
  bool Has(const char* key, bool present) const { return reading() ? in_->contains(key) : present; }
  /// The member `key` being read (null on error or when writing).
  const nlohmann::json* In(const char* key);

 private:
  explicit JsonFields(std::string* text) : text_(text) {}
  /// Text: the separator and `"key":`; the caller appends the value.
  std::string& Key(const char* key);
  /// Writes `v` under `key`, into the tree or the text.
  template <class T>
  void Put(const char* key, const T& v);
  void Wrong(const char* key, const std::string& must);
  void Nested(const char* key, const std::function<void(JsonFields&)>& each);
  void NestedArray(const char* key, size_t n, const std::function<void(JsonFields&, size_t)>& each);
  template <class U>
  JsonFields& Unsigned(const char* key, U& v);
  /// A member whose JSON type `is` tells, read with get<T>().
  template <class T>
  JsonFields& Plain(const char* key, T& v, bool (nlohmann::json::*is)() const noexcept, const char* must);
  /// A member written as its ToString() text and read back with T::Parse; `what` names the type it must be.
  template <class T>
  JsonFields& Parsed(const char* key, T& v, const char* what);

  nlohmann::json* out_ = nullptr;
  const nlohmann::json* in_ = nullptr;
  std::string* text_ = nullptr;
  bool first_ = true;  ///< text: no member written yet
  base::Status status_ = base::Ok();
};

}  // namespace cni

#include "cni/core/json_fields.h"

#include <charconv>
#include <climits>
#include <type_traits>

namespace cni {

using base::Code;
using base::Error;
using base::Status;
using nlohmann::json;

namespace {

// A JSON string, as nlohmann's serializer writes it.
void AppendString(std::string& out, std::string_view s) {
  for (const unsigned char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      out += json(std::string(s)).dump();
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

template <class N>
void AppendNumber(std::string& out, N n) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out.append(buf, end);
}

}  // namespace

std::string JsonFields::Text(const std::function<void(JsonFields&)>& members) {
  std::string text;
  text.reserve(2048);
  text += '{';
  JsonFields f(&text);
  members(f);
  text += '}';
  return text;
}

std::string& JsonFields::Key(const char* key) {
  if (!first_) *text_ += ',';
  first_ = false;
  AppendString(*text_, key);
  *text_ += ':';
  return *text_;
}

template <class T>
void JsonFields::Put(const char* key, const T& v) {
  if (out_ != nullptr) {
    (*out_)[key] = v;
    return;
  }
  std::string& out = Key(key);
  if constexpr (std::is_same_v<T, std::string>) {
    AppendString(out, v);
  } else if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    AppendNumber(out, v);
  } else if constexpr (std::is_same_v<T, json>) {
    out += v.dump();
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>);
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      AppendString(out, v[i]);
    }
    out += ']';
  }
}

void JsonFields::Refuse(const std::string& what) { Fail(Error(Code::kState, "state: " + what)); }
void JsonFields::Wrong(const char* key, const std::string& must) {
  Refuse(std::string("\"") + key + "\" " + must);
}

const json* JsonFields::In(const char* key) {
  if (!status_.ok()) return nullptr;
  if (!in_->is_object()) return Refuse(std::string("expected an object holding \"") + key + "\""), nullptr;
  auto it = in_->find(key);
  if (it == in_->end()) return Refuse(std::string("missing \"") + key + "\""), nullptr;
  return &*it;
}

template <class T>
JsonFields& JsonFields::Plain(const char* key, T& v, bool (json::*is)() const noexcept, const char* must) {
  if (!reading()) {
    Put(key, v);
  } else if (const json* j = In(key)) {
    if (!(j->*is)())
      Wrong(key, must);
    else
      v = j->get<T>();
  }
  return *this;
}

template <class T>
JsonFields& JsonFields::Parsed(const char* key, T& v, const char* what) {
  std::string text = reading() ? std::string() : v.ToString();
  (*this)(key, text);
  if (!reading() || !status_.ok()) return *this;
  auto parsed = T::Parse(text);
  if (!parsed)
    Wrong(key, what + text);
  else
    v = *parsed;
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, std::string& v) {
  return Plain(key, v, &json::is_string, "must be a string");
}

template <class U>
JsonFields& JsonFields::Unsigned(const char* key, U& v) {
  if (!reading()) {
    Put(key, static_cast<uint64_t>(v));
  } else if (const json* j = In(key)) {
    if (!j->is_number_unsigned()) return Wrong(key, "must be an unsigned integer"), *this;
    const uint64_t n = j->get<uint64_t>();
    if (n > std::numeric_limits<U>::max())
      Wrong(key, "is out of range");
    else
      v = static_cast<U>(n);
  }
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, uint64_t& v) { return Unsigned(key, v); }
JsonFields& JsonFields::operator()(const char* key, uint32_t& v) { return Unsigned(key, v); }
JsonFields& JsonFields::operator()(const char* key, uint8_t& v) { return Unsigned(key, v); }

JsonFields& JsonFields::operator()(const char* key, int& v) {
  // Indexes: never negative in what ADD writes, read back as unsigned.
  if (!reading() && v < 0) {
    Put(key, v);
    return *this;
  }
  auto u = static_cast<uint32_t>(v);
  Unsigned(key, u);
  if (reading() && status_.ok()) {
    if (u > static_cast<uint32_t>(INT_MAX)) Wrong(key, "is out of range");
    v = static_cast<int>(u);
  }
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, bool& v) {
  return Plain(key, v, &json::is_boolean, "must be a boolean");
}

JsonFields& JsonFields::operator()(const char* key, json& v) {
  if (!reading())
    Put(key, v);
  else if (const json* j = In(key))
    v = *j;
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, netlink::IpPrefix& v) {
  return Parsed(key, v, "is not a CIDR: ");
}

JsonFields& JsonFields::operator()(const char* key, netlink::IpAddress& v) {
  return Parsed(key, v, "is not an IP address: ");
}

JsonFields& JsonFields::operator()(const char* key, std::vector<std::string>& v) {
  if (!reading()) {
    Put(key, v);
  } else if (const json* j = In(key)) {
    if (!j->is_array()) return Wrong(key, "must be an array"), *this;
    for (const json& e : *j) {
      if (!e.is_string()) return Wrong(key, "must hold strings"), *this;
      v.push_back(e.get<std::string>());
    }
  }
  return *this;
}

void JsonFields::Nested(const char* key, const std::function<void(JsonFields&)>& each) {
  if (text_ != nullptr) {
    Key(key) += '{';
    JsonFields sub(text_);
    each(sub);
    *text_ += '}';
  } else if (!reading()) {
    JsonFields sub((*out_)[key] = json::object());
    each(sub);
  } else if (const json* j = In(key)) {
    JsonFields sub(*j);
    each(sub);
    if (!sub.status().ok()) Fail(sub.status().error());
  }
}

void JsonFields::NestedArray(const char* key, size_t n,
                             const std::function<void(JsonFields&, size_t)>& each) {
  if (text_ != nullptr) {
    Key(key) += '[';
    for (size_t i = 0; i < n; ++i) {
      if (i) *text_ += ',';
      *text_ += '{';
      JsonFields sub(text_);
      each(sub, i);
      *text_ += '}';
    }
    *text_ += ']';
  } else if (!reading()) {
    json& arr = (*out_)[key] = json::array();
    for (size_t i = 0; i < n; ++i) {
      JsonFields sub(arr.emplace_back(json::object()));
      each(sub, i);
    }
  } else if (const json* j = In(key)) {
    if (!j->is_array()) return Wrong(key, "must be an array");
    for (size_t i = 0; i < j->size() && status_.ok(); ++i) {
      if (!(*j)[i].is_object()) return Wrong(key, "must hold objects");
      JsonFields sub((*j)[i]);
      each(sub, i);
      if (!sub.status().ok()) Fail(sub.status().error());
    }
  }
}

}  // namespace cni

// The dispatch over the Step variant, JsonFields, and what the family files
// share.
#include "cni/steps.h"

#include <cerrno>
#include <charconv>
#include <climits>
#include <type_traits>
#include <utility>

#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using nlohmann::json;

namespace {

// A JSON string: as it is when nothing in it needs an escape (what nlohmann
// writes for it too), else as nlohmann's serializer writes it.
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

JsonFields& JsonFields::operator()(const char* key, std::string& v) {
  if (!reading()) {
    Put(key, v);
  } else if (const json* j = In(key)) {
    if (!j->is_string())
      Wrong(key, "must be a string");
    else
      v = j->get<std::string>();
  }
  return *this;
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
  if (!reading()) {
    Put(key, v);
  } else if (const json* j = In(key)) {
    if (!j->is_boolean())
      Wrong(key, "must be a boolean");
    else
      v = j->get<bool>();
  }
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, json& v) {
  if (!reading())
    Put(key, v);
  else if (const json* j = In(key))
    v = *j;
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, netlink::IpPrefix& v) {
  std::string text = reading() ? std::string() : v.ToString();
  (*this)(key, text);
  if (!reading() || !status_.ok()) return *this;
  auto p = netlink::IpPrefix::Parse(text);
  if (!p)
    Wrong(key, "is not a CIDR: " + text);
  else
    v = *p;
  return *this;
}

JsonFields& JsonFields::operator()(const char* key, netlink::IpAddress& v) {
  std::string text = reading() ? std::string() : v.ToString();
  (*this)(key, text);
  if (!reading() || !status_.ok()) return *this;
  auto a = netlink::IpAddress::Parse(text);
  if (!a)
    Wrong(key, "is not an IP address: " + text);
  else
    v = *a;
  return *this;
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

namespace {

template <size_t... I>
std::vector<std::string> OpsOf(std::index_sequence<I...>) {
  return {StepOp(Step(std::in_place_index<I>))...};
}

template <size_t I = 0>
Result<Step> StepOfOp(const std::string& op, const json& j) {
  if constexpr (I == std::variant_size_v<Step>) {
    return Error(Code::kState, "state: unknown step op \"" + op + "\"");
  } else {
    using T = std::variant_alternative_t<I, Step>;
    if (op != T::kOp) return StepOfOp<I + 1>(op, j);
    T s;
    JsonFields f(j);
    Fields(f, s);
    if (!f.status().ok()) return f.status().error();
    return Step(std::move(s));
  }
}

}  // namespace

const char* StepOp(const Step& step) {
  return std::visit([](const auto& s) { return std::decay_t<decltype(s)>::kOp; }, step);
}

std::vector<std::string> AllStepOps() { return OpsOf(std::make_index_sequence<std::variant_size_v<Step>>{}); }

std::string DescribeStep(const Step& step) {
  return std::visit([](const auto& s) { return Describe(s); }, step);
}

bool OnLink(const Step& step) {
  return std::visit(
      [](const auto& s) {
        return requires { std::decay_t<decltype(s)>::kOnLink; };
      },
      step);
}

void StepFields(JsonFields& f, const Step& step) {
  std::string op = StepOp(step);
  f("op", op);
  // Writing reads the step only.
  std::visit([&f](const auto& s) { Fields(f, const_cast<std::decay_t<decltype(s)>&>(s)); }, step);
}

json StepToJson(const Step& step) {
  json j = json::object();
  JsonFields f(j);
  StepFields(f, step);
  return j;
}

Result<Step> StepFromJson(const json& j) {
  std::string op;
  JsonFields f(j);
  f("op", op);
  RETURN_IF_ERROR(f.status());
  return StepOfOp(op, j);
}

Status ApplyStep(const Step& step, const AttachmentState& state, StepEnv& env) {
  return std::visit([&](const auto& s) { return Apply(s, state, env); }, step);
}

Status UndoStep(const Step& step, const UndoEnv& u, StepEnv& env) {
  return std::visit([&](const auto& s) { return Undo(s, u, env); }, step);
}

Status CheckStep(const Step& step, CheckEnv& env) {
  return std::visit([&](const auto& s) { return Check(s, env); }, step);
}

Status ValidateStep(const Step& step, const StepAt& at) {
  return std::visit([&](const auto& s) { return Validate(s, at); }, step);
}

Result<netlink::Kernel*> PodOf(const StepEnv& env) {
  if (!env.pod) return Error(Code::kInvalidEnv, "the pod netns is gone");
  return env.pod;
}

Status IgnoreGone(Status s) {
  const int e = s.ok() ? 0 : s.error().sys_errno;
  if (e == ENODEV || e == ESRCH || e == ENOENT || e == EADDRNOTAVAIL) return base::Ok();
  return s;
}

Status IgnoreExists(Status s) {
  if (!s.ok() && s.error().sys_errno == EEXIST) return base::Ok();
  return s;
}

Error BadValue(const std::string& field, const std::string& value, const std::string& must) {
  std::string shown;
  for (unsigned char c : value.substr(0, 80)) {
    if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[c >> 4];
      shown += kHex[c & 0xf];
    } else {
      shown += static_cast<char>(c);
    }
  }
  if (value.size() > 80) shown += "...";
  return Error(Code::kState, "\"" + field + "\" " + "\"" + shown + "\" must be " + must);
}

Status CheckIfName(const std::string& field, const std::string& v) {
  if (!conf::IsValidIfName(v))
    return BadValue(field, v, "an interface name (1..15 bytes, no '/', ':' or whitespace)");
  return base::Ok();
}

Error Mismatch(const std::string& what) { return Error(Code::kCheckFailed, "CHECK: " + what); }

}  // namespace cni

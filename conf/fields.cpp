#include "conf/fields.h"

namespace conf {

using nlohmann::json;

base::Error Invalid(std::string msg) { return base::Error(base::Code::kInvalidConfig, std::move(msg)); }

const json* Get(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Quote(std::string_view s) {
  // Replace: building an error message must never throw.
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool GetUint(const json& v, uint64_t min, uint64_t max, uint64_t* out) {
  if (!v.is_number_integer()) return false;  // true for signed and unsigned
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return false;
  const uint64_t n = v.get<uint64_t>();
  if (n < min || n > max) return false;
  *out = n;
  return true;
}

base::Status GetBool(const json& obj, const char* key, const std::string& path, bool* out) {
  const json* v = Get(obj, key);
  if (!v) return base::Ok();
  if (!v->is_boolean()) return Invalid(path + ": must be true or false");
  *out = v->get<bool>();
  return base::Ok();
}

}  // namespace conf

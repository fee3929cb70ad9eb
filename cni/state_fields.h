// Checked accessors for reading state files, which may be truncated or
// edited by hand: every missing or mistyped member is a kState error naming
// it. Internal to cni/state*.cpp and cni/steps*.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "netlink/ip.h"

namespace cni::state_fields {

using base::Code;
using base::Error;
using base::Result;
using netlink::IpAddress;
using netlink::IpPrefix;
using nlohmann::json;

inline Error Bad(const std::string& what) { return Error(Code::kState, "state: " + what); }

inline Result<const json*> Field(const json& j, const char* key) {
  if (!j.is_object()) return Bad("expected an object holding \"" + std::string(key) + "\"");
  auto it = j.find(key);
  if (it == j.end()) return Bad(std::string("missing \"") + key + "\"");
  return &*it;
}

inline Result<std::string> Str(const json& j, const char* key) {
  ASSIGN_OR_RETURN(const json* v, Field(j, key));
  if (!v->is_string()) return Bad(std::string("\"") + key + "\" must be a string");
  return v->get<std::string>();
}

inline Result<uint64_t> Uint(const json& j, const char* key) {
  ASSIGN_OR_RETURN(const json* v, Field(j, key));
  if (!v->is_number_unsigned()) return Bad(std::string("\"") + key + "\" must be an unsigned integer");
  return v->get<uint64_t>();
}

inline Result<bool> Bool(const json& j, const char* key) {
  ASSIGN_OR_RETURN(const json* v, Field(j, key));
  if (!v->is_boolean()) return Bad(std::string("\"") + key + "\" must be a boolean");
  return v->get<bool>();
}

inline Result<IpPrefix> Prefix(const json& j, const char* key) {
  ASSIGN_OR_RETURN(std::string s, Str(j, key));
  auto p = IpPrefix::Parse(s);
  if (!p) return Bad(std::string("\"") + key + "\" is not a CIDR: " + s);
  return *p;
}

inline Result<std::optional<IpAddress>> OptAddr(const json& j, const char* key) {
  if (!j.contains(key)) return std::optional<IpAddress>();
  ASSIGN_OR_RETURN(std::string s, Str(j, key));
  auto a = IpAddress::Parse(s);
  if (!a) return Bad(std::string("\"") + key + "\" is not an IP address: " + s);
  return std::optional<IpAddress>(*a);
}

}  // namespace cni::state_fields

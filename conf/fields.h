// Reading typed fields out of the config JSON with errors that name the key: conf/'s, and the drivers' for
// their options.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/error.h"

namespace conf {

/// Code 7 with `msg`, which starts with the key path.
base::Error Invalid(std::string msg);

/// The member `key`, or nullptr when it is absent or JSON null. Go plugins
/// read null as "not set", and runtimes generated from Go structs emit it.
const nlohmann::json* Get(const nlohmann::json& obj, const char* key);

/// `s` as a JSON string literal, for messages; never throws.
std::string Quote(std::string_view s);

/// An integer in [min, max]; floats (even 200.0), bools, strings and negatives are refused.
bool GetUint(const nlohmann::json& v, uint64_t min, uint64_t max, uint64_t* out);

/// An optional boolean member; code 7 naming `path` when it is not a bool.
base::Status GetBool(const nlohmann::json& obj, const char* key, const std::string& path, bool* out);

}  // namespace conf

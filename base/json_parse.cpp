#include "base/json_parse.h"

namespace base {

namespace {
struct TooDeep {};
}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what, int max_depth) {
  using nlohmann::json;
  // JSON text has no raw NUL anywhere (in strings it must be escaped), and
  // nlohmann's lexer takes one for the end of input: `{...}\0<anything>`
  // would pass as the object alone.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Error(Code::kDecoding,
                 what + " holds a NUL byte at offset " + std::to_string(nul) + "; it must be JSON text");
  try {
    return json::parse(
        text.begin(), text.end(),
        [max_depth](int depth, json::parse_event_t, json&) {
          // The callback sees every value with its depth before the tree
          // grows past it: throwing stops the parse there.
          if (depth > max_depth) throw TooDeep{};
          return true;
        },
        /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const TooDeep&) {
    return Error(Code::kDecoding,
                 what + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
  } catch (const json::exception& e) {
    return Error(Code::kDecoding, what + " is not valid JSON", e.what());
  } catch (const std::exception& e) {
    return Error(Code::kDecoding, what + " cannot be decoded", e.what());
  }
}

}  // namespace base

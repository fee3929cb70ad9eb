#include "base/json_parse.h"

namespace base {

namespace {
struct TooDeep {};

// nlohmann's own tree builder (the one json::parse uses), told the depth at every event: a container past
// `max` stops the parse before the tree grows (docs/decisions/json-reads-through-a-tree.md).
class BoundedDom : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  using json = nlohmann::json;
  BoundedDom(json& root, int max) : Base(root, /*allow_exceptions=*/true), max_(max) {}

  bool null() { return At() && Base::null(); }
  bool boolean(bool v) { return At() && Base::boolean(v); }
  bool number_integer(json::number_integer_t v) { return At() && Base::number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return At() && Base::number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return At() && Base::number_float(v, s);
  }
  bool string(json::string_t& v) { return At() && Base::string(v); }
  bool binary(json::binary_t& v) { return At() && Base::binary(v); }
  bool key(json::string_t& v) { return At() && Base::key(v); }
  bool start_object(std::size_t n) { return At(1) && Base::start_object(n); }
  bool start_array(std::size_t n) { return At(1) && Base::start_array(n); }
  bool end_object() { return At(-1) && Base::end_object(); }
  bool end_array() { return At(-1) && Base::end_array(); }

 private:
  // A value or an opened container (`by` 1) is checked at the depth it is at; `by` -1 closes a container.
  bool At(int by = 0) {
    if (by >= 0 && depth_ > max_) throw TooDeep{};
    depth_ += by;
    return true;
  }
  int depth_ = 0;
  int max_;
};
}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what, int max_depth) {
  using nlohmann::json;
  // JSON text has no raw NUL anywhere (in strings it must be escaped), and nlohmann's lexer takes one for the
  // end of input: `{...}\0<anything>` would pass as the object alone.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Error(Code::kDecoding,
                 what + " holds a NUL byte at offset " + std::to_string(nul) + "; it must be JSON text");
  try {
    json root;
    BoundedDom dom(root, max_depth);
    json::sax_parse(text.begin(), text.end(), &dom, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
    return root;
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

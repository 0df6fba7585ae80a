#include "core/text/tokenizer_common.h"
#include "core/util/json_file.h"

#include <algorithm>

namespace attnscope {
namespace {

// Accepts exactly one flat object of string keys and integer values.
class VocabSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  PieceToId vocab;
  std::string problem;

  bool null() override { return fail("a null value"); }
  bool boolean(bool) override { return fail("a boolean value"); }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override {
    return add(static_cast<number_integer_t>(value));
  }
  bool number_float(number_float_t, const string_t&) override { return fail("a fractional id"); }
  bool string(string_t&) override { return fail("a string value"); }
  bool binary(binary_t&) override { return fail("binary data"); }
  bool start_object(std::size_t size) override {
    if (depth_++ != 0) return fail("a nested object");
    if (size != static_cast<std::size_t>(-1)) vocab.reserve(size);
    return true;
  }
  bool key(string_t& key) override {
    key_ = std::move(key);
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return fail("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    problem = e.what();
    return false;
  }

 private:
  bool add(number_integer_t value) {
    if (depth_ != 1) return fail("a value outside the object");
    if (value < 0 || value > 0x7FFFFFFF) return fail("an id out of range");
    vocab.insert_or_assign(std::move(key_), static_cast<int>(value));
    return true;
  }
  bool fail(const char* what) {
    problem = std::string("expected {\"piece\": id, ...} but found ") + what;
    return false;
  }
  int depth_ = 0;
  std::string key_;
};

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& path, const char* what,
                              std::uint64_t max_bytes) {
  const std::string text = read_regular_file(path, what, max_bytes);
  if (json_nesting_depth(text) > kTokenizerJsonMaxDepth) {
    throw ModelError(path.string() + ": JSON nested more than " +
                     std::to_string(kTokenizerJsonMaxDepth) +
                     " levels deep (Hugging Face's tokenizers refuses it too)");
  }
  return parse_json_text(text, path);
}

PieceToId read_vocab_json(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, "vocabulary");
  VocabSax sax;
  sax.vocab.reserve(65536);
  if (!nlohmann::json::sax_parse(text, &sax) || !sax.problem.empty()) {
    throw ModelError(path.string() + ": " +
                     (sax.problem.empty() ? "not a vocabulary" : sax.problem));
  }
  return std::move(sax.vocab);
}

}  // namespace attnscope

#pragma once
// A regular expression with the semantics Hugging Face's tokenizers gives tokenizer.json patterns:
// Oniguruma (its Rust crate wraps the same C library), the default syntax, UTF-8, no options.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/pipeline/normalized_string.h"

namespace attnscope::text {

class Regex {
 public:
  // Throws ModelError (with `where` and Oniguruma's message) for a pattern it cannot compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The matches and the text between them, covering `text` in order, as Hugging Face's
  // find_matches for a SysRegex: an empty text is one non-match [0, 0); an empty match right
  // after the previous match is skipped. `text` must be valid UTF-8.
  std::vector<PatternMatch> find_matches(std::string_view text) const;

  // A pattern that matches `literal` exactly (regex::escape).
  static std::string escape(std::string_view literal);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope::text

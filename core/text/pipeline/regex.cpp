#include "core/text/pipeline/regex.h"

#include <oniguruma.h>

#include <mutex>

#include "core/util/error.h"

namespace attnscope::text {
namespace {

void initialize_oniguruma() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

struct RegionDeleter {
  void operator()(OnigRegion* region) const { onig_region_free(region, 1); }
};

}  // namespace

struct Regex::Impl {
  OnigRegex regex = nullptr;
  std::string where;  // for messages: the file and component
  std::string shown;  // the pattern, cut for messages
};

namespace {

std::string shown_pattern(const std::string& pattern) {
  return pattern.size() > 80 ? pattern.substr(0, 80) + "..." : pattern;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& where)
    : impl_(std::make_unique<Impl>()) {
  initialize_oniguruma();
  OnigErrorInfo error_info;
  const auto* begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int status = onig_new(&impl_->regex, begin, begin + pattern.size(), ONIG_OPTION_NONE,
                              ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &error_info);
  if (status != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, status, &error_info);
    impl_->regex = nullptr;
    throw ModelError(where + ": the regular expression \"" + shown_pattern(pattern) +
                     "\" does not compile: " + reinterpret_cast<const char*>(message));
  }
  impl_->where = where;
  impl_->shown = shown_pattern(pattern);
}

Regex::~Regex() {
  if (impl_ && impl_->regex) onig_free(impl_->regex);
}

std::vector<PatternMatch> Regex::find_matches(std::string_view text) const {
  if (text.empty()) return {{0, 0, false}};
  std::vector<PatternMatch> matches;
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  const auto* str = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = str + text.size();
  const int size = static_cast<int>(text.size());
  int search_from = 0;
  int last_match_end = -1;
  int previous = 0;  // end of the last match pushed
  while (search_from <= size) {
    const int found =
        onig_search(impl_->regex, str, end, str + search_from, end, region.get(), ONIG_OPTION_NONE);
    if (found == ONIG_MISMATCH) break;
    if (found < 0) {
      // Oniguruma gave up (its retry limit: catastrophic backtracking on this text). Treating it as
      // "no match" would give other tokens than Hugging Face's without a word; its tokenizers
      // stops with an error too (the onig crate panics "Regex search error").
      OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(message, found);
      const bool retry =
          found == ONIGERR_RETRY_LIMIT_IN_MATCH_OVER || found == ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER;
      throw ModelError(impl_->where + ": the regular expression \"" + impl_->shown + "\" " +
                       (retry ? "hit the regex engine's retry limit on this text (" : "failed (") +
                       reinterpret_cast<const char*>(message) + ")");
    }
    const int match_start = region->beg[0];
    const int match_end = region->end[0];
    // As the onig crate's find_iter: no empty match right after the previous match.
    if (match_start == match_end && match_end == last_match_end) {
      if (search_from >= size) break;
      search_from += unicode::decode_at(text, static_cast<std::size_t>(search_from)).length;
      continue;
    }
    search_from = match_end;
    last_match_end = match_end;
    if (previous != match_start) matches.push_back({previous, match_start, false});
    matches.push_back({match_start, match_end, true});
    previous = match_end;
    if (match_start == match_end) {
      // An empty match: the next search starts at the same place; the rule above moves it on.
    }
  }
  if (previous != size) matches.push_back({previous, size, false});
  return matches;
}

std::string Regex::escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\.+*?()|[]{}^$#&-~ ").find(c) != std::string_view::npos && c != ' ') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace attnscope::text

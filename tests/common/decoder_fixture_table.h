#pragma once
// The decoder fixtures tools/make_fixture_models writes, one row each. Every test that runs "each
// decoder family" builds its list from here, so a new family's fixture is one row in this table
// (plus the fixture itself and its golden), not a hand edit of every test file.
#include <string>
#include <vector>

namespace attnscope::test {

struct DecoderFixtureRow {
  const char* name;  // the folder under ATTNSCOPE_FIXTURES
  const char* kind;  // its config.json's model_type
  // One per family variant, with a golden of tools/reference/hf_decoder_reference.py in
  // tests/data/golden/<name>.json (attention, rotated q and k, top-10, logits). GPT-2's fixtures
  // have goldens of their own format (tools/reference/hf_reference.py) and tests of their own.
  bool family_golden;
};

inline const std::vector<DecoderFixtureRow>& decoder_fixture_table() {
  static const std::vector<DecoderFixtureRow> rows = {
      {"llama-tiny", "llama", true},        {"smollm-tiny", "llama", true},
      {"mistral-tiny", "mistral", true},    {"qwen2-tiny", "qwen2", true},
      {"qwen3-tiny", "qwen3", true},        {"gemma2-tiny", "gemma2", true},
      {"gemma3-tiny", "gemma3_text", true}, {"smollm3-tiny", "smollm3", true},
      {"gemma3-mm-tiny", "gemma3", true},   {"olmo2-tiny", "olmo2", true},
      {"pythia-tiny", "gpt_neox", true},    {"phi3-tiny", "phi3", true},
      {"phi4-mini-tiny", "phi3", true},     {"gpt2-tiny-f32", "gpt2", false},
      {"gpt2-tiny-bf16", "gpt2", false},
  };
  return rows;
}

// The fixtures with a family golden: one per family variant.
inline std::vector<std::string> family_fixtures() {
  std::vector<std::string> names;
  for (const DecoderFixtureRow& r : decoder_fixture_table())
    if (r.family_golden) names.push_back(r.name);
  return names;
}

// Every decoder fixture (the families' and GPT-2's in float32 and bfloat16).
inline std::vector<std::string> decoder_fixtures() {
  std::vector<std::string> names;
  for (const DecoderFixtureRow& r : decoder_fixture_table()) names.push_back(r.name);
  return names;
}

// `names` followed by `more` (the built-in models some tests add).
inline std::vector<std::string> plus(std::vector<std::string> names,
                                     const std::vector<std::string>& more) {
  names.insert(names.end(), more.begin(), more.end());
  return names;
}

// A gtest parameter name from a fixture name ("llama-tiny" -> "llama_tiny").
struct FixtureTestName {
  template <class Info>
  std::string operator()(const Info& info) const {
    std::string s = info.param;
    for (char& ch : s)
      if (ch == '-' || ch == '.') ch = '_';
    return s;
  }
};

}  // namespace attnscope::test

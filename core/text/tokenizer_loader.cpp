// load_tokenizer: decides from the folder's files which pipeline to build. tokenizer.json is read
// as Hugging Face's tokenizers reads it; vocab.json + merges.txt and vocab.txt build the pipeline
// that GPT2TokenizerFast and BertTokenizerFast convert them to.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/text/marian_tokenizer.h"
#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/pipeline.h"
#include "core/text/tokenizer.h"
#include "core/text/tokenizer_common.h"
#include "core/text/tokenizer_files.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace {

using namespace text;
using nlohmann::json;

std::vector<AddedTokenSpec> parse_added_tokens(const json& doc, const std::string& where) {
  std::vector<AddedTokenSpec> tokens;
  if (!doc.contains("added_tokens") || doc["added_tokens"].is_null()) return tokens;
  const json& list = array_field(doc, "added_tokens", where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string here = where + " added_tokens[" + std::to_string(i) + "]";
    const json& item = list[i];
    if (!item.is_object()) throw ModelError(here + ": must be an object");
    AddedTokenSpec t;
    t.content = string_field(item, "content", here);
    if (!item.contains("id")) throw ModelError(here + ": key \"id\" is missing");
    t.id = id_value(item["id"], "key \"id\"", here);
    t.lstrip = bool_field(item, "lstrip", false, here);
    t.rstrip = bool_field(item, "rstrip", false, here);
    t.normalized = bool_field(item, "normalized", !bool_field(item, "special", false, here), here);
    t.single_word = bool_field(item, "single_word", false, here);
    t.special = bool_field(item, "special", false, here);
    tokens.push_back(std::move(t));
  }
  return tokens;
}

// ["[CLS]", 101] as BertProcessing/RobertaProcessing write their tokens.
std::pair<int, std::string> token_pair(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_array() || j[key].size() != 2 || !j[key][0].is_string()) {
    throw ModelError(where + ": key \"" + key + "\" must be [\"token\", id]");
  }
  return {id_value(j[key][1], std::string("key \"") + key + "\"", where),
          j[key][0].get<std::string>()};
}

void parse_post_processor(const json& j, const std::string& where, std::vector<PostStep>& steps,
                          int depth = 0) {
  if (j.is_null()) return;
  check_nesting(depth, where);
  const std::string type = string_field(j, "type", where);
  const std::string here = where + " " + type;
  PostStep step;
  if (type == "ByteLevel") {
    step.trim_offsets = bool_field(j, "trim_offsets", true, here);
    step.add_prefix_space = bool_field(j, "add_prefix_space", true, here);
  } else if (type == "BertProcessing") {
    step.prefix.push_back(token_pair(j, "cls", here));
    step.suffix.push_back(token_pair(j, "sep", here));
  } else if (type == "RobertaProcessing") {
    step.trim_offsets = bool_field(j, "trim_offsets", true, here);
    step.add_prefix_space = bool_field(j, "add_prefix_space", true, here);
    step.prefix.push_back(token_pair(j, "cls", here));
    step.suffix.push_back(token_pair(j, "sep", here));
  } else if (type == "TemplateProcessing") {
    const json& specials = j.contains("special_tokens") && j["special_tokens"].is_object()
                               ? j["special_tokens"]
                               : json::object();
    bool after_sequence = false;
    for (const json& item : array_field(j, "single", here)) {
      if (item.contains("Sequence")) {
        after_sequence = true;
        continue;
      }
      const std::string name = string_field(object_field(item, "SpecialToken", here), "id", here);
      if (!specials.contains(name)) {
        throw ModelError(here + ": special token \"" + name + "\" is not in special_tokens");
      }
      const json& special = specials[name];
      // A named context: GCC 14's -Wdangling-reference takes a temporary argument for the referent.
      const std::string context = here + " " + name;
      const json& ids = array_field(special, "ids", context);
      const json& pieces = array_field(special, "tokens", context);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::string piece =
            k < pieces.size() && pieces[k].is_string() ? pieces[k].get<std::string>() : name;
        (after_sequence ? step.suffix : step.prefix)
            .emplace_back(id_value(ids[k], "special token \"" + name + "\"", here), piece);
      }
    }
  } else if (type == "Sequence") {
    for (const json& sub : array_field(j, "processors", here)) {
      parse_post_processor(sub, where, steps, depth + 1);
    }
    return;
  } else {
    throw ModelError(where + ": post_processor type \"" + type + "\" is not supported");
  }
  steps.push_back(std::move(step));
}

// Only what decode(id) needs to show one token; decoders that join or strip a whole text (Fuse,
// Strip, CTC) do not change a single token in the middle of a text.
void parse_decoder(const json& j, const std::string& where, std::vector<DecoderStep>& steps,
                   int depth = 0) {
  if (!j.is_object()) return;
  check_nesting(depth, where);
  const std::string type = j.value("type", std::string());
  if (type == "ByteLevel") steps.push_back({DecodeStep::kByteLevel, "", ""});
  if (type == "ByteFallback") steps.push_back({DecodeStep::kByteFallback, "", ""});
  if (type == "Metaspace") {
    steps.push_back({DecodeStep::kReplace, j.value("replacement", std::string("\u2581")), " "});
  }
  if (type == "Replace" && j.contains("pattern") && j["pattern"].is_object() &&
      j["pattern"].contains("String") && j["pattern"]["String"].is_string()) {
    steps.push_back({DecodeStep::kReplace, j["pattern"]["String"].get<std::string>(),
                     j.value("content", std::string())});
  }
  if (type == "WordPiece") {
    steps.push_back({DecodeStep::kWordPiece, j.value("prefix", std::string("##")), ""});
  }
  if (type == "Sequence" && j.contains("decoders") && j["decoders"].is_array()) {
    for (const json& sub : j["decoders"]) parse_decoder(sub, where, steps, depth + 1);
  }
}

// tokenizer_config.json's bos_token / eos_token: a string or {"content": …}.
std::string config_token(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return {};
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return {};
}

// BOS/EOS from tokenizer_config.json, and add_bos_token / add_eos_token where the post-processor
// adds nothing itself.
void apply_config(const json& config, const std::string& where, PipelineParts& parts,
                  const Tokenizer& probe) {
  const std::string bos = config_token(config, "bos_token");
  const std::string eos = config_token(config, "eos_token");
  if (!bos.empty()) parts.bos_id = probe.token_to_id(bos);
  if (!eos.empty()) parts.eos_id = probe.token_to_id(eos);
  bool post_adds = false;
  for (const PostStep& s : parts.post_processor) {
    post_adds = post_adds || !s.prefix.empty() || !s.suffix.empty();
  }
  if (post_adds || !config.is_object()) return;
  PostStep step;
  if (bool_field(config, "add_bos_token", false, where) && parts.bos_id >= 0) {
    step.prefix.emplace_back(parts.bos_id, bos);
  }
  if (bool_field(config, "add_eos_token", false, where) && parts.eos_id >= 0) {
    step.suffix.emplace_back(parts.eos_id, eos);
  }
  if (!step.prefix.empty() || !step.suffix.empty()) parts.post_processor.push_back(step);
}

// doc[key], or null when absent, without copying (json::value copies the whole component).
const json& member(const json& doc, const char* key) {
  static const json null_value;
  const auto it = doc.find(key);
  return it == doc.end() ? null_value : *it;
}

PipelineParts parts_from_tokenizer_json(const std::filesystem::path& path) {
  const std::string where = path.string();
  const json doc = read_json_file(path, "tokenizer file");
  if (!doc.is_object()) throw ModelError(where + ": expected a JSON object");
  PipelineParts parts;
  parts.added_tokens = parse_added_tokens(doc, where);
  parts.normalizer = make_normalizer(member(doc, "normalizer"), where + " normalizer");
  parts.pre_tokenizer = make_pre_tokenizer(member(doc, "pre_tokenizer"), where + " pre_tokenizer");
  if (!doc.contains("model")) throw ModelError(where + ": key \"model\" is missing");
  parts.model = make_model(doc["model"], where, static_cast<int>(parts.added_tokens.size()));
  parse_post_processor(member(doc, "post_processor"), where + " post_processor",
                       parts.post_processor);
  parse_decoder(member(doc, "decoder"), where + " decoder", parts.decoder);
  parts.description = "tokenizer.json: " + parts.model->description();
  return parts;
}

PipelineParts gpt2_parts(const std::filesystem::path& vocab_json,
                         const std::filesystem::path& merges_txt, const json& config) {
  PipelineParts parts;
  PieceToId vocab = read_vocab_json(vocab_json);
  const std::string text = read_text_file(merges_txt, "merges file");
  std::vector<std::pair<std::string, std::string>> merges;
  int line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("#version")) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      throw ModelError(merges_txt.string() + " line " + std::to_string(line_number) +
                       ": expected two tokens separated by one space");
    }
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  // GPT2TokenizerFast: <|endoftext|> is an added token recognised in the text.
  if (const auto it = vocab.find("<|endoftext|>"); it != vocab.end()) {
    parts.added_tokens.push_back({"<|endoftext|>", it->second, false, false, true, false, true});
    parts.bos_id = parts.eos_id = it->second;
  }
  checked_vocab_size(vocab, vocab_json.string(), 0);
  parts.model = make_bpe_model(std::move(vocab), merges, BpeOptions{}, merges_txt.string(), 0);
  const bool prefix_space = bool_field(config, "add_prefix_space", false, "tokenizer_config.json");
  parts.pre_tokenizer = make_byte_level_pre_tokenizer(prefix_space, true);
  parts.post_processor.push_back({false, true, {}, {}});
  parts.decoder.push_back({DecodeStep::kByteLevel, "", ""});
  parts.description = "vocab.json + merges.txt: byte-level BPE";
  return parts;
}

PipelineParts bert_parts(const std::filesystem::path& vocab_txt, const json& config) {
  const std::string text = read_text_file(vocab_txt, "vocabulary");
  PieceToId vocab;
  int id = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    // As transformers' load_vocab: the line number is the id, the line end is stripped.
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    vocab.insert_or_assign(std::string(line), id++);
  }
  PipelineParts parts;
  const std::string where = "tokenizer_config.json";
  BertNormalizerOptions o;
  o.lowercase = bool_field(config, "do_lower_case", true, where);
  o.strip_accents = bool_field(config, "strip_accents", o.lowercase, where);
  o.handle_chinese_chars = bool_field(config, "tokenize_chinese_chars", true, where);
  parts.normalizer = make_bert_normalizer(o);
  parts.pre_tokenizer = make_bert_pre_tokenizer();
  // BertTokenizerFast's special tokens: recognised in the text, [CLS] … [SEP] around it.
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    if (const auto it = vocab.find(special); it != vocab.end()) {
      parts.added_tokens.push_back({special, it->second, false, false, false, false, true});
    }
  }
  const auto cls = vocab.find("[CLS]");
  const auto sep = vocab.find("[SEP]");
  if (cls != vocab.end() && sep != vocab.end()) {
    parts.post_processor.push_back(
        {false, false, {{cls->second, "[CLS]"}}, {{sep->second, "[SEP]"}}});
    parts.bos_id = cls->second;
    parts.eos_id = sep->second;
  }
  parts.decoder.push_back({DecodeStep::kWordPiece, "##", ""});
  parts.model = make_wordpiece_model(std::move(vocab), {}, vocab_txt.string(), 0);
  parts.description = std::string("vocab.txt: WordPiece") + (o.lowercase ? " (lower-cased)" : "");
  return parts;
}

// The first post-processor special token as BOS and the last as EOS when the config names none
// (BERT's [CLS]/[SEP], Llama's <s>).
void bos_eos_from_post_processor(PipelineParts& parts) {
  for (const PostStep& s : parts.post_processor) {
    if (parts.bos_id < 0 && !s.prefix.empty()) parts.bos_id = s.prefix.front().first;
    if (parts.eos_id < 0 && !s.suffix.empty()) parts.eos_id = s.suffix.back().first;
  }
}

// Added token ids bound the vocabulary size others allocate by (embedding rows, logits): one far
// beyond the model's vocabulary is an error, not a 2^31-entry table.
void check_added_ids(const PipelineParts& parts, const std::string& where) {
  const long long limit =
      2LL * parts.model->size() + static_cast<long long>(parts.added_tokens.size()) + 1024;
  for (std::size_t i = 0; i < parts.added_tokens.size(); ++i) {
    if (parts.added_tokens[i].id >= limit) {
      throw ModelError(where + " added_tokens[" + std::to_string(i) + "]: id " +
                       std::to_string(parts.added_tokens[i].id) + " is far beyond the " +
                       std::to_string(parts.model->size()) + " ids of the model's vocabulary");
    }
  }
}

// Every id a post-processor adds must be one the tokenizer knows (a vocabulary piece or an added
// token): an unknown one is a broken file, said here rather than as a model's "id outside the
// vocabulary" later, which reads as the user's mistake.
void check_post_processor_ids(const PipelineParts& parts, const std::string& where) {
  long long size = parts.model->size();
  for (const AddedTokenSpec& t : parts.added_tokens) size = std::max<long long>(size, t.id + 1LL);
  for (const PostStep& step : parts.post_processor) {
    for (const auto* list : {&step.prefix, &step.suffix}) {
      for (const auto& [id, piece] : *list) {
        bool known = parts.model->id_to_token(id) != nullptr;
        for (const AddedTokenSpec& t : parts.added_tokens) known = known || t.id == id;
        if (known) continue;
        throw ModelError(where + ": special token \"" + quote_excerpt(piece, 40) + "\" has id " +
                         std::to_string(id) + ", which is not in the vocabulary (" +
                         std::to_string(size) + " ids)");
      }
    }
  }
}

}  // namespace

bool has_tokenizer_files(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  return files.tokenizer_json || (files.vocab_json && files.merges_txt) || files.vocab_txt ||
         has_marian_tokenizer_files(folder);
}

std::shared_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  json config;
  if (files.tokenizer_config_json) {
    config =
        read_json_file(*files.tokenizer_config_json, "tokenizer config", kTokenizerConfigMaxBytes);
    if (!config.is_object()) {
      throw ModelError(files.tokenizer_config_json->string() + ": expected a JSON object");
    }
  }
  PipelineParts parts;
  if (files.tokenizer_json) {
    parts = parts_from_tokenizer_json(*files.tokenizer_json);
  } else if (files.vocab_json && files.merges_txt) {
    parts = gpt2_parts(*files.vocab_json, *files.merges_txt, config);
  } else if (files.vocab_txt) {
    parts = bert_parts(*files.vocab_txt, config);
  } else if (has_marian_tokenizer_files(folder)) {
    return load_marian_tokenizers(folder).source;  // Marian: source.spm + vocab.json
  } else {
    throw ModelError(folder.string() +
                     " has no tokenizer: expected tokenizer.json, vocab.json + merges.txt or "
                     "vocab.txt (or Marian's source.spm + vocab.json), found " +
                     files.describe());
  }
  if (!config.is_null()) {
    // Ids are looked up through a first build, so added tokens and the model both count.
    const std::string where =
        files.tokenizer_config_json ? files.tokenizer_config_json->string() : std::string();
    struct Lookup final : Tokenizer {
      const PipelineParts& p;
      explicit Lookup(const PipelineParts& parts) : p(parts) {}
      Tokens encode(std::string_view, bool) const override { return {}; }
      std::string decode(int) const override { return {}; }
      std::string id_to_token(int) const override { return {}; }
      int token_to_id(std::string_view piece) const override {
        for (const AddedTokenSpec& t : p.added_tokens) {
          if (t.content == piece) return t.id;
        }
        return p.model->token_to_id(piece);
      }
      int vocab_size() const override { return 0; }
      int bos_id() const override { return -1; }
      int eos_id() const override { return -1; }
      std::string description() const override { return {}; }
    };
    apply_config(config, where, parts, Lookup(parts));
  }
  bos_eos_from_post_processor(parts);
  const std::string where = files.tokenizer_json ? files.tokenizer_json->string() : folder.string();
  check_added_ids(parts, where);
  check_post_processor_ids(parts, where + " post_processor");
  return make_pipeline_tokenizer(std::move(parts));
}

}  // namespace attnscope

// MarianTokenizer (transformers' models/marian/tokenization_marian.py) over the
// SentencePiece encoder of sentencepiece_file.cpp and the checkpoint's
// vocab.json.
#include "core/text/marian_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/text/pipeline/models.h"
#include "core/text/sentencepiece_file.h"
#include "core/text/tokenizer_common.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Vocabulary {
  PieceToId ids;
  std::vector<std::string> pieces;  // by id; "" where no piece has the id
};

Vocabulary read_vocabulary(const fs::path& path) {
  Vocabulary v;
  v.ids = read_vocab_json(path);
  const int size = text::checked_vocab_size(v.ids, path.string(), 0);
  v.pieces.resize(static_cast<std::size_t>(size));
  for (const auto& [piece, id] : v.ids) v.pieces[static_cast<std::size_t>(id)] = piece;
  return v;
}

// tokenizer_config.json's token: a string or {"content": …}; `fallback` when
// absent.
std::string config_token(const json& config, const char* key, const char* fallback) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return fallback;
}

struct Side {
  std::shared_ptr<const SentencePieceEncoder> spm;
  std::shared_ptr<const Vocabulary> vocab;
  std::vector<std::string> specials;  // found whole in the text
  std::string unk, eos;
  int unk_id = -1, eos_id = -1;
  std::string description;
};

class MarianTokenizer final : public Tokenizer {
 public:
  explicit MarianTokenizer(Side side) : s_(std::move(side)) {}

  Tokens encode(std::string_view text, bool add_special_tokens) const override {
    Tokens out;
    std::size_t chunk = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t best = 0;
      for (const std::string& special : s_.specials) {
        if (special.size() > best && text.substr(pos).starts_with(special)) best = special.size();
      }
      if (best == 0) {
        ++pos;
        continue;
      }
      encode_part(text, chunk, pos, out);
      const std::string content(text.substr(pos, best));
      out.push_back({id_of(content), content, static_cast<int>(pos), static_cast<int>(pos + best),
                     false, false, false});
      pos += best;
      chunk = pos;
    }
    encode_part(text, chunk, text.size(), out);
    if (add_special_tokens) out.push_back({s_.eos_id, s_.eos, -1, -1, true, false, false});
    return out;
  }

  std::string decode(int id) const override {
    const std::string piece = id_to_token(id);
    if (std::find(s_.specials.begin(), s_.specials.end(), piece) != s_.specials.end()) {
      return piece;
    }
    if (piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>') {
      const auto hex = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      };
      const int hi = hex(piece[3]), lo = hex(piece[4]);
      if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
    }
    std::string out;
    for (std::size_t at = 0; at < piece.size();) {
      if (std::string_view(piece).substr(at).starts_with("\u2581")) {
        out += ' ';
        at += 3;
      } else {
        out += piece[at++];
      }
    }
    return out;
  }

  std::string id_to_token(int id) const override {
    if (id < 0 || id >= vocab_size()) return {};
    return s_.vocab->pieces[static_cast<std::size_t>(id)];
  }
  int token_to_id(std::string_view piece) const override {
    const auto it = s_.vocab->ids.find(piece);
    return it == s_.vocab->ids.end() ? -1 : it->second;
  }
  int vocab_size() const override { return static_cast<int>(s_.vocab->pieces.size()); }
  int bos_id() const override { return -1; }
  int eos_id() const override { return s_.eos_id; }
  std::string description() const override { return s_.description; }
  PieceEncoding piece_encoding() const override { return PieceEncoding::kSentencePiece; }

 private:
  int id_of(std::string_view piece) const {
    const int id = token_to_id(piece);
    return id >= 0 ? id : s_.unk_id;
  }

  // MarianTokenizer._tokenize of text[from, to): a leading language code, then
  // the .spm's pieces.
  void encode_part(std::string_view text, std::size_t from, std::size_t to, Tokens& out) const {
    if (from >= to) return;
    std::string_view part = text.substr(from, to - from);
    if (part.starts_with(">>")) {
      if (const std::size_t end = part.find("<<"); end != std::string_view::npos) {
        const std::string code(part.substr(0, end + 2));
        const int id = token_to_id(code);
        out.push_back({id >= 0 ? id : s_.unk_id, code, static_cast<int>(from),
                       static_cast<int>(from + end + 2), false, id < 0, false});
        from += end + 2;
        part.remove_prefix(end + 2);
      }
    }
    for (SentencePiecePiece& p : s_.spm->encode(part)) {
      const int id = token_to_id(p.piece);
      out.push_back({id >= 0 ? id : s_.unk_id, std::move(p.piece), static_cast<int>(from) + p.start,
                     static_cast<int>(from) + p.end, false, p.unknown || id < 0, false});
    }
  }

  Side s_;
};

std::optional<fs::path> regular(const fs::path& folder, const char* name) {
  std::error_code error;
  if (fs::is_regular_file(folder / name, error)) return folder / name;
  return std::nullopt;
}

}  // namespace

bool has_marian_tokenizer_files(const fs::path& folder) {
  return regular(folder, "source.spm") && regular(folder, "vocab.json");
}

MarianTokenizers load_marian_tokenizers(const fs::path& folder) {
  const auto source_spm = regular(folder, "source.spm");
  const auto target_spm = regular(folder, "target.spm");
  const auto vocab_json = regular(folder, "vocab.json");
  const auto config_json = regular(folder, "tokenizer_config.json");
  std::string missing;
  for (const auto& [file, name] :
       {std::pair{source_spm, "source.spm"}, std::pair{target_spm, "target.spm"},
        std::pair{vocab_json, "vocab.json"}}) {
    if (!file) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    throw ModelError(folder.string() +
                     " has no Marian tokenizer: expected source.spm, "
                     "target.spm and vocab.json; "
                     "missing " +
                     missing);
  }
  json config = json::object();
  if (config_json) {
    config = read_json_file(*config_json, "tokenizer config", kTokenizerConfigMaxBytes);
    if (!config.is_object()) throw ModelError(config_json->string() + ": expected a JSON object");
  }
  const std::string config_name =
      config_json ? config_json->string() : (folder / "tokenizer_config.json").string();
  bool separate = false;
  if (config.contains("separate_vocabs") && !config["separate_vocabs"].is_null()) {
    if (!config["separate_vocabs"].is_boolean()) {
      throw ModelError(config_name + ": key \"separate_vocabs\" must be true or false");
    }
    separate = config["separate_vocabs"].get<bool>();
  }
  const std::string unk = config_token(config, "unk_token", "<unk>");
  const std::string eos = config_token(config, "eos_token", "</s>");
  const std::string pad = config_token(config, "pad_token", "<pad>");
  std::vector<std::string> specials = {unk, eos, pad};
  if (config.contains("additional_special_tokens") &&
      config["additional_special_tokens"].is_array()) {
    for (const json& t : config["additional_special_tokens"]) {
      if (t.is_string()) specials.push_back(t.get<std::string>());
      if (t.is_object() && t.contains("content") && t["content"].is_string()) {
        specials.push_back(t["content"].get<std::string>());
      }
    }
  }
  std::erase_if(specials, [](const std::string& s) { return s.empty(); });

  auto source_vocab = std::make_shared<const Vocabulary>(read_vocabulary(*vocab_json));
  std::shared_ptr<const Vocabulary> target_vocab = source_vocab;
  fs::path target_vocab_path = *vocab_json;
  if (separate) {
    const auto path = regular(folder, "target_vocab.json");
    if (!path) {
      throw ModelError(config_name + " says separate_vocabs, but " + folder.string() +
                       " has no target_vocab.json");
    }
    target_vocab = std::make_shared<const Vocabulary>(read_vocabulary(*path));
    target_vocab_path = *path;
  }
  const std::string lang = config.contains("source_lang") && config["source_lang"].is_string() &&
                                   config.contains("target_lang") &&
                                   config["target_lang"].is_string()
                               ? " " + config["source_lang"].get<std::string>() + "->" +
                                     config["target_lang"].get<std::string>()
                               : std::string();

  auto side = [&](const fs::path& spm_path, const char* spm_name,
                  std::shared_ptr<const Vocabulary> vocab, const fs::path& vocab_path) {
    Side s;
    s.spm = std::make_shared<const SentencePieceEncoder>(read_sentencepiece_model(spm_path),
                                                         spm_path.string());
    s.vocab = std::move(vocab);
    for (const auto& [token, key] : {std::pair{&unk, "unk_token"}, std::pair{&eos, "eos_token"}}) {
      if (!s.vocab->ids.contains(*token)) {
        throw ModelError(vocab_path.string() + ": \"" + unicode::printable_utf8(*token) + "\" (" +
                         key + ") is not in the vocabulary");
      }
    }
    s.unk = unk;
    s.eos = eos;
    s.unk_id = s.vocab->ids.find(unk)->second;
    s.eos_id = s.vocab->ids.find(eos)->second;
    s.specials = specials;
    s.description = std::string(spm_name) + " + " + vocab_path.filename().string() +
                    ": SentencePiece Unigram (Marian" + lang + ")";
    return std::make_shared<const MarianTokenizer>(std::move(s));
  };
  MarianTokenizers out;
  out.source = side(*source_spm, "source.spm", source_vocab, *vocab_json);
  out.target = side(*target_spm, "target.spm", target_vocab, target_vocab_path);
  return out;
}

}  // namespace attnscope

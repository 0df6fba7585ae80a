// The .spm files of the Marian fixtures: pieces, scores and charsmap taken from a Unigram
// tokenizer.json that tests/tools/make_unigram_tokenizers.py built, written as SentencePiece's
// ModelProto (protobuf wire format, fields in number order as protobuf serializes them).
#include "spm_writer.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace fixture {
namespace {

namespace fs = std::filesystem;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_key(std::string& out, int number, int wire_type) {
  put_varint(out,
             (static_cast<std::uint64_t>(number) << 3) | static_cast<std::uint64_t>(wire_type));
}
void put_bytes(std::string& out, int number, std::string_view bytes) {
  put_key(out, number, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}
void put_int32(std::string& out, int number, int value) {
  put_key(out, number, 0);
  // Negative int32 values are sign-extended to 64 bits (ten bytes), as protobuf writes them.
  put_varint(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
}
void put_float(std::string& out, int number, float value) {
  put_key(out, number, 5);
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

std::string decode_base64(const std::string& text, const std::string& where) {
  auto value = [&](char c) -> std::uint32_t {
    if (c >= 'A' && c <= 'Z') return static_cast<std::uint32_t>(c - 'A');
    if (c >= 'a' && c <= 'z') return static_cast<std::uint32_t>(c - 'a' + 26);
    if (c >= '0' && c <= '9') return static_cast<std::uint32_t>(c - '0' + 52);
    if (c == '+') return 62;
    if (c == '/') return 63;
    throw std::runtime_error(where + ": precompiled_charsmap is not base64");
  };
  if (text.size() % 4 != 0)
    throw std::runtime_error(where + ": precompiled_charsmap is not base64");
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t bits = 0;
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      bits <<= 6;
      if (c == '=') {
        ++padding;
      } else {
        bits |= value(c);
      }
    }
    out.push_back(static_cast<char>(bits >> 16));
    if (padding < 2) out.push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (padding < 1) out.push_back(static_cast<char>(bits & 0xFF));
  }
  return out;
}

// The Precompiled normalizer's charsmap, alone or inside a Sequence.
std::string find_charsmap(const nlohmann::json& normalizer, const std::string& where) {
  if (!normalizer.is_object()) return {};
  const std::string type = normalizer.value("type", std::string());
  if (type == "Precompiled") {
    return decode_base64(normalizer.value("precompiled_charsmap", std::string()), where);
  }
  if (type == "Sequence" && normalizer.contains("normalizers")) {
    for (const nlohmann::json& n : normalizer["normalizers"]) {
      std::string found = find_charsmap(n, where);
      if (!found.empty()) return found;
    }
  }
  return {};
}

int code_points(const std::string& s) {
  int n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

SpmModelSpec marian_spm(const std::vector<SpmPiece>& pieces, const std::string& charsmap) {
  SpmModelSpec spec;
  spec.pieces = {{"<unk>", 0.0f, SpmPieceType::kUnknown},
                 {"<s>", 0.0f, SpmPieceType::kControl},
                 {"</s>", 0.0f, SpmPieceType::kControl}};
  spec.pieces.insert(spec.pieces.end(), pieces.begin(), pieces.end());
  spec.precompiled_charsmap = charsmap;
  return spec;
}

}  // namespace

std::string serialize_spm_model(const SpmModelSpec& spec) {
  std::string out;
  for (const SpmPiece& p : spec.pieces) {
    std::string piece;
    put_bytes(piece, 1, p.piece);
    put_float(piece, 2, p.score);
    if (p.type != SpmPieceType::kNormal) put_int32(piece, 3, static_cast<int>(p.type));
    put_bytes(out, 1, piece);
  }
  std::string trainer;
  put_int32(trainer, 3, 1);                                     // model_type UNIGRAM
  put_int32(trainer, 4, static_cast<int>(spec.pieces.size()));  // vocab_size
  if (spec.byte_fallback) {
    put_key(trainer, 35, 0);
    put_varint(trainer, 1);
  }
  put_int32(trainer, 40, spec.unk_id);
  put_int32(trainer, 41, spec.bos_id);
  put_int32(trainer, 42, spec.eos_id);
  put_int32(trainer, 43, spec.pad_id);
  put_bytes(out, 2, trainer);
  std::string normalizer;
  put_bytes(normalizer, 1, spec.normalizer_name);
  if (!spec.precompiled_charsmap.empty()) put_bytes(normalizer, 2, spec.precompiled_charsmap);
  for (const auto& [number, on] :
       {std::pair{3, spec.add_dummy_prefix}, std::pair{4, spec.remove_extra_whitespaces},
        std::pair{5, spec.escape_whitespaces}}) {
    put_key(normalizer, number, 0);
    put_varint(normalizer, on ? 1 : 0);
  }
  put_bytes(out, 3, normalizer);
  return out;
}

MarianVocabInfo write_marian_tokenizer_files(const fs::path& folder,
                                             const MarianTokenizerOptions& options) {
  const std::string where = options.unigram_tokenizer_json.string();
  std::ifstream in(options.unigram_tokenizer_json, std::ios::binary);
  if (!in) throw std::runtime_error(where + ": cannot be read (a Unigram tokenizer.json)");
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.contains("model") || !doc["model"].is_object() ||
      doc["model"].value("type", std::string()) != "Unigram" || !doc["model"].contains("vocab") ||
      !doc["model"]["vocab"].is_array()) {
    throw std::runtime_error(where + ": not a Unigram tokenizer.json");
  }
  const std::string charsmap =
      doc.contains("normalizer") ? find_charsmap(doc["normalizer"], where) : std::string();
  // The pieces in their order, specials and byte pieces left out; single characters apart.
  static const std::set<std::string> kSpecials = {"<pad>", "</s>", "<unk>", "<s>", "<mask>"};
  std::vector<SpmPiece> words, characters;
  for (const nlohmann::json& entry : doc["model"]["vocab"]) {
    const std::string piece = entry.at(0).get<std::string>();
    if (kSpecials.contains(piece) || (piece.size() == 6 && piece.starts_with("<0x"))) continue;
    const SpmPiece p{piece, static_cast<float>(entry.at(1).get<double>()), SpmPieceType::kNormal};
    (code_points(piece) == 1 ? characters : words).push_back(p);
  }
  const std::size_t source_n = static_cast<std::size_t>(std::max(0, options.source_pieces));
  const std::size_t target_n = static_cast<std::size_t>(std::max(0, options.target_pieces));
  const std::size_t chars_n =
      std::min(characters.size(), static_cast<std::size_t>(std::max(0, options.characters)));
  if (source_n + target_n - target_n / 2 > words.size()) {
    throw std::runtime_error(where + ": has " + std::to_string(words.size()) +
                             " pieces, fewer than the options ask for");
  }
  // Each side: its words, then the characters (a vocabulary's order: the ids of the .spm).
  std::vector<SpmPiece> source(words.begin(),
                               words.begin() + static_cast<std::ptrdiff_t>(source_n));
  std::vector<SpmPiece> target(words.begin(),
                               words.begin() + static_cast<std::ptrdiff_t>(target_n / 2));
  target.insert(target.end(), words.begin() + static_cast<std::ptrdiff_t>(source_n),
                words.begin() + static_cast<std::ptrdiff_t>(source_n + target_n - target_n / 2));
  for (std::size_t i = 0; i < chars_n; ++i) {
    source.push_back(characters[i]);
    target.push_back(characters[i]);
  }

  fs::create_directories(folder);
  write_file(folder / "source.spm", serialize_spm_model(marian_spm(source, charsmap)));
  write_file(folder / "target.spm", serialize_spm_model(marian_spm(target, charsmap)));

  nlohmann::ordered_json vocab;
  int next = 0;
  auto add = [&](const std::string& piece) {
    if (!vocab.contains(piece)) vocab[piece] = next++;
  };
  add("</s>");
  add("<unk>");
  for (const std::string& code : options.language_codes) add(code);
  for (const SpmPiece& p : source) add(p.piece);
  for (const SpmPiece& p : target) add(p.piece);
  add("<pad>");
  MarianVocabInfo info;
  info.vocab_size = next;
  info.eos_id = vocab["</s>"].get<int>();
  info.unk_id = vocab["<unk>"].get<int>();
  info.pad_id = vocab["<pad>"].get<int>();
  write_file(folder / "vocab.json", vocab.dump(2, ' ', false) + "\n");

  const nlohmann::ordered_json config = {{"source_lang", options.source_lang},
                                         {"target_lang", options.target_lang},
                                         {"unk_token", "<unk>"},
                                         {"eos_token", "</s>"},
                                         {"pad_token", "<pad>"},
                                         {"model_max_length", 512},
                                         {"sp_model_kwargs", nlohmann::ordered_json::object()},
                                         {"separate_vocabs", false},
                                         {"target_vocab_file", nullptr},
                                         {"tokenizer_class", "MarianTokenizer"}};
  write_file(folder / "tokenizer_config.json", config.dump(2) + "\n");
  return info;
}

}  // namespace fixture

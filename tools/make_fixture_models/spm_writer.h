#pragma once
// SentencePiece model files (.spm, the ModelProto of sentencepiece_model.proto) for the fixtures,
// and the tokenizer files of a Marian (opus-mt) checkpoint: source.spm, target.spm, vocab.json and
// tokenizer_config.json, as Helsinki-NLP's folders ship them (no tokenizer.json).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fixture {

// sentencepiece_model.proto's SentencePiece.Type.
enum class SpmPieceType {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

struct SpmPiece {
  std::string piece;
  float score = 0.0f;
  SpmPieceType type = SpmPieceType::kNormal;
};

// One ModelProto: pieces in id order, trainer_spec (model_type UNIGRAM), normalizer_spec.
struct SpmModelSpec {
  std::vector<SpmPiece> pieces;
  bool byte_fallback = false;
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;  // Marian's: <unk> <s> </s>, no pad
  std::string normalizer_name = "nmt_nfkc";
  std::string precompiled_charsmap;  // raw bytes (SentencePiece's format); empty: identity
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// The ModelProto's wire-format bytes (what SentencePieceProcessor.Load reads).
std::string serialize_spm_model(const SpmModelSpec& spec);

struct MarianTokenizerOptions {
  // A Unigram tokenizer.json (tests/tools/make_unigram_tokenizers.py's t5_like or xlmr_like, in
  // the build's fixture-tokenizers folder): its pieces (in order, "<...>" specials skipped), their
  // scores and its Precompiled normalizer's charsmap make both .spm files.
  std::filesystem::path unigram_tokenizer_json;
  // source.spm keeps the first `source_pieces` of those pieces; target.spm the first
  // target_pieces / 2 and the next target_pieces - target_pieces / 2 after the source's (so the
  // two vocabularies differ, as en and de do, and share their most frequent pieces).
  int source_pieces = 3000;
  int target_pieces = 3000;
  // Both also keep the first `characters` single-character pieces (the vocabulary lists them
  // last, by frequency): the rarer characters stay unknown (<unk>), as in a real vocabulary.
  int characters = 1000;
  std::string source_lang = "en";
  std::string target_lang = "de";
  // ">>de<<"-style codes of a multilingual model: put in vocab.json right after <unk> (empty for
  // a bilingual model such as opus-mt-en-de).
  std::vector<std::string> language_codes;
};

// What config.json needs to agree with the files written.
struct MarianVocabInfo {
  int vocab_size = 0;  // entries of vocab.json (ids 0 .. vocab_size - 1)
  int eos_id = 0;      // "</s>"
  int unk_id = 1;      // "<unk>"
  int pad_id = 0;      // "<pad>", the last id (Marian's pad_token_id = decoder_start_token_id)
};

// Writes folder/source.spm, target.spm, vocab.json (shared: </s> 0, <unk> 1, language codes,
// the source pieces then the target-only ones, <pad> last) and tokenizer_config.json
// (source_lang, target_lang, unk/eos/pad tokens, separate_vocabs false, MarianTokenizer).
// Creates the folder. Deterministic: the same options give the same bytes. Throws
// std::runtime_error naming the file when the tokenizer.json is missing or not a Unigram one.
MarianVocabInfo write_marian_tokenizer_files(const std::filesystem::path& folder,
                                             const MarianTokenizerOptions& options);

}  // namespace fixture

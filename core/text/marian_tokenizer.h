#pragma once
// Marian (Helsinki-NLP opus-mt) tokenizers, as Hugging Face's MarianTokenizer
// gives them: a checkpoint ships source.spm and target.spm (SentencePiece
// unigram models), vocab.json (the model's ids; target_vocab.json too when
// separate_vocabs) and tokenizer_config.json, and no tokenizer.json.
//
// encode: special tokens typed in the text (<unk>, </s>, <pad>,
// additional_special_tokens) are found first, leftmost-longest, and kept whole;
// a part of the text that starts with ">>" and has a "<<" after it begins with
// that language code, one token (">>fr<<"); the rest is encoded by the side's
// .spm as SentencePiece's encode(text, out_type=str) does, and each piece takes
// its id from vocab.json (a piece not in it: <unk>'s id). add_special_tokens
// appends </s>. Offsets are bytes of the text; decode(id) reads the side's
// vocabulary ("▁" is a space, <0xXX> a byte).
#include <filesystem>
#include <memory>

#include "core/text/tokenizer.h"

namespace attnscope {

struct MarianTokenizers {
  std::shared_ptr<const Tokenizer> source;  // source.spm + vocab.json: the encoder's text
  std::shared_ptr<const Tokenizer> target;  // target.spm + vocab.json (or target_vocab.json)
};

// Throws ModelError naming the folder and the file missing, or the file that is
// malformed.
MarianTokenizers load_marian_tokenizers(const std::filesystem::path& folder);

// True when `folder` has source.spm and vocab.json (a Marian checkpoint's
// tokenizer files).
bool has_marian_tokenizer_files(const std::filesystem::path& folder);

}  // namespace attnscope

// An encoder as a Model: its tokenizer (WordPiece for BERT and DistilBERT, byte-level BPE for
// RoBERTa, Unigram for XLM-R) with the family's [CLS] … [SEP] or <s> … </s>, in front of
// BertNetwork.
#include "core/model/bert/bert_model.h"

#include <algorithm>
#include <cctype>

#include "core/model/bert/bert_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/transformer/hf_weights.h"
#include "core/model/transformer/transformer_blocks.h"
#include "core/text/tokenizer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// `piece` as the special token the model adds (no offsets); its id must be below `vocab`.
Token special_token(const Tokenizer& tokenizer, const std::string& piece, int vocab,
                    const std::string& name) {
  const int id = tokenizer.token_to_id(piece);
  if (id < 0 || id >= vocab)
    throw ModelError(name + ": the vocabulary has no usable " + piece + " token");
  Token t;
  t.id = id;
  t.text = piece;
  t.special = true;
  return t;
}

// How many tokens with_specials makes of words[0, keep): RoBERTa's typed pairs take one more.
std::size_t with_specials_size(const Tokens& words, std::size_t keep, const Token& sep,
                               int pair_separators) {
  std::size_t size = keep + 2;
  for (std::size_t i = 0; i + 1 < keep; ++i)
    if (words[i].id == sep.id) size += pair_separators - 1;
  return size;
}

Tokens with_specials(Tokens words, const Token& cls, const Token& sep, int pair_separators) {
  Tokens all;
  all.reserve(words.size() + 2);
  all.push_back(cls);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const bool typed_separator = words[i].id == sep.id && i + 1 < words.size();
    all.push_back(std::move(words[i]));
    if (typed_separator)
      for (int k = 1; k < pair_separators; ++k) all.push_back(sep);
  }
  all.push_back(sep);
  return all;
}

class BertModel final : public Model {
 public:
  BertModel(std::string name, const EncoderSpec& spec, BertNetwork network,
            std::shared_ptr<const Tokenizer> tokenizer)
      : name_(std::move(name)),
        network_(std::move(network)),
        tokenizer_(std::move(tokenizer)),
        pair_separators_(spec.pair_separators) {
    cls_ = special(spec.cls);
    sep_ = special(spec.sep);
  }

  ModelInfo info() const override {
    ModelInfo i;
    i.name = name_;
    i.kind = network_.config().kind;
    i.layers = network_.config().layers;
    i.heads = network_.config().heads;
    i.pieces = tokenizer_->piece_encoding();
    i.capabilities.formula_steps = true;
    return i;
  }

  Tokens tokenize(const std::string& text) const override {
    return with_specials(tokenizer_->encode(text, false));
  }

  AttentionTrace run(const std::string& text, Backend& backend) const override {
    Tokens words = tokenizer_->encode(text, false);
    int truncated_at = -1;
    const int room = network_.config().max_tokens() - 2;  // [CLS] and [SEP] take two positions
    const auto limit = static_cast<std::size_t>(network_.config().max_tokens());
    std::size_t keep = std::min<std::size_t>(words.size(), std::max(room, 0));
    while (keep > 0 && with_specials_size(words, keep) > limit) --keep;
    if (keep < words.size()) {
      truncated_at = words[keep].start;  // where the first dropped word starts
      words.resize(keep);
    }
    Tokens tokens = with_specials(std::move(words));
    check_tokens_embedded(tokens, network_.config().vocab);
    const std::vector<int> types = token_types(tokens);
    AttentionTrace trace = network_.forward_ids(
        token_ids(tokens), backend, nullptr, network_.config().type_vocab > 0 ? &types : nullptr);
    trace.model = info();
    trace.text = text;
    trace.tokens = std::move(tokens);
    trace.truncated_at_byte = truncated_at;
    return trace;
  }

 private:
  Token special(const std::string& piece) const {
    return special_token(*tokenizer_, piece, network_.config().vocab, name_);
  }
  // A [SEP] typed between two sentences makes a sentence pair, as Hugging Face's tokenizer(a, b)
  // encodes it: [CLS] a [SEP] has token type 0, b [SEP] type 1 (models with one type: all 0). The
  // typed [SEP] is not `special` in the trace (it has offsets into the text), but it is [SEP].
  // RoBERTa's pair is <s> a </s></s> b </s>: with_specials adds the second </s>.
  std::vector<int> token_types(const Tokens& tokens) const {
    std::vector<int> types(tokens.size(), 0);
    int type = 0;
    const int last_type = network_.config().type_vocab - 1;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      types[i] = type;
      if (tokens[i].id == sep_.id) type = std::min(type + 1, last_type);
    }
    return types;
  }

  std::size_t with_specials_size(const Tokens& words, std::size_t keep) const {
    return attnscope::with_specials_size(words, keep, sep_, pair_separators_);
  }
  Tokens with_specials(Tokens words) const {
    return attnscope::with_specials(std::move(words), cls_, sep_, pair_separators_);
  }

  std::string name_;
  BertNetwork network_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  int pair_separators_ = 1;
  Token cls_, sep_;
};

}  // namespace

std::shared_ptr<const Model> load_bert_model(const fs::path& folder, const EncoderSpec& spec,
                                             const ProgressFn& progress) {
  const std::string name = model_name_from_folder(folder);
  std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(folder);
  // More tokens than embedding rows is opened; a text producing such an id is refused at encode.
  BertNetwork network = BertNetwork::load(folder, spec, progress);
  return std::make_shared<BertModel>(name, spec, std::move(network), std::move(tokenizer));
}

Tokens encoder_tokenize(const Tokenizer& tokenizer, const EncoderSpec& spec,
                        const std::string& text) {
  const std::string name = "tokenizer";
  const int vocab = std::max(tokenizer.vocab_size(), spec.config.vocab);
  return with_specials(tokenizer.encode(text, false),
                       special_token(tokenizer, spec.cls, vocab, name),
                       special_token(tokenizer, spec.sep, vocab, name), spec.pair_separators);
}

std::shared_ptr<const Model> load_bert_model(const fs::path& folder, const ProgressFn& progress) {
  const fs::path config = folder / "config.json";
  return load_bert_model(folder, encoder_spec_of(read_json_file(config), config), progress);
}

}  // namespace attnscope

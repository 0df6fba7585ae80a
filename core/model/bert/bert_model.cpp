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
    const int id = tokenizer_->token_to_id(piece);
    if (id < 0 || id >= network_.config().vocab)
      throw ModelError(name_ + ": the vocabulary has no usable " + piece + " token");
    Token t;
    t.id = id;
    t.text = piece;
    t.special = true;
    return t;
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

  // How many tokens with_specials makes of words[0, keep): RoBERTa's typed pairs take one more.
  std::size_t with_specials_size(const Tokens& words, std::size_t keep) const {
    std::size_t size = keep + 2;
    for (std::size_t i = 0; i + 1 < keep; ++i)
      if (words[i].id == sep_.id) size += pair_separators_ - 1;
    return size;
  }

  Tokens with_specials(Tokens words) const {
    Tokens all;
    all.reserve(words.size() + 2);
    all.push_back(cls_);
    for (std::size_t i = 0; i < words.size(); ++i) {
      const bool typed_separator = words[i].id == sep_.id && i + 1 < words.size();
      all.push_back(std::move(words[i]));
      if (typed_separator)
        for (int k = 1; k < pair_separators_; ++k) all.push_back(sep_);
    }
    all.push_back(sep_);
    return all;
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

std::shared_ptr<const Model> load_bert_model(const fs::path& folder, const ProgressFn& progress) {
  const fs::path config = folder / "config.json";
  return load_bert_model(folder, encoder_spec_of(read_json_file(config), config), progress);
}

}  // namespace attnscope

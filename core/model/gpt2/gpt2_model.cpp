// GPT-2 as a Model: the byte-level BPE tokenizer in front of Gpt2Network.
#include "core/model/gpt2/gpt2_model.h"

#include "core/model/gpt2/gpt2_network.h"
#include "core/model/transformer/hf_weights.h"
#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

class Gpt2Model final : public Model {
 public:
  Gpt2Model(std::string name, Gpt2Network network, std::shared_ptr<const Tokenizer> tokenizer)
      : name_(std::move(name)), network_(std::move(network)), tokenizer_(std::move(tokenizer)) {}

  ModelInfo info() const override {
    ModelInfo i;
    i.name = name_;
    i.kind = "gpt2";
    i.layers = network_.config().layers;
    i.heads = network_.config().heads;
    i.capabilities.formula_steps = true;
    i.capabilities.predictions = true;
    return i;
  }

  Tokens tokenize(const std::string& text) const override { return tokenizer_->encode(text, true); }

  AttentionTrace run(const std::string& text, Backend& backend) const override {
    Tokens tokens = tokenize(text);
    int truncated_at = -1;
    if (static_cast<int>(tokens.size()) > network_.config().positions) {
      // GPT-2 has no position beyond n_positions; the text from the first dropped token is unused.
      truncated_at = tokens[network_.config().positions].start;
      tokens.resize(network_.config().positions);
    }
    AttentionTrace trace = network_.forward_ids(token_ids(tokens), backend);
    trace.model = info();
    trace.text = text;
    trace.tokens = std::move(tokens);
    trace.truncated_at_byte = truncated_at;
    for (Prediction& p : trace.predictions)
      p.text = unicode::printable_utf8(tokenizer_->decode(p.id));
    return trace;
  }

 private:
  std::string name_;
  Gpt2Network network_;
  std::shared_ptr<const Tokenizer> tokenizer_;
};

}  // namespace

std::shared_ptr<const Model> load_gpt2_model(const fs::path& folder, const ProgressFn& progress) {
  std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(folder);
  Gpt2Network network = Gpt2Network::load(folder, progress);
  if (tokenizer->vocab_size() > network.config().vocab)
    throw ModelError(folder.string() + ": the tokenizer has " +
                     std::to_string(tokenizer->vocab_size()) + " tokens but the model only " +
                     std::to_string(network.config().vocab));
  return std::make_shared<Gpt2Model>(model_name_from_folder(folder), std::move(network),
                                     std::move(tokenizer));
}

}  // namespace attnscope

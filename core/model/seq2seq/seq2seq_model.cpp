// An encoder–decoder as a Model: source tokens through the encoder, target tokens (given, or chosen
// greedily with the KV cache) through the decoder, and one teacher-forced decoder pass over the
// final tokens for the trace, so a greedy trace equals the trace of its output given as target.
#include "core/model/seq2seq/seq2seq_model.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/model/decoder/decoder_network.h"
#include "core/model/seq2seq/seq2seq_network.h"
#include "core/model/transformer/hf_weights.h"
#include "core/model/transformer/transformer_blocks.h"
#include "core/text/marian_tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// Cuts `tokens` to `limit`, keeping the specials the tokenizer put at its ends (<s> … </s>): the
// words in between are dropped from the end. Returns the byte where the first dropped word starts,
// or -1.
int cut_keeping_specials(Tokens& tokens, int limit) {
  if (static_cast<int>(tokens.size()) <= limit) return -1;
  std::size_t head = 0, tail = 0;
  while (head < tokens.size() && tokens[head].special && tokens[head].start < 0) ++head;
  while (tail < tokens.size() - head && tokens[tokens.size() - 1 - tail].special &&
         tokens[tokens.size() - 1 - tail].start < 0)
    ++tail;
  const std::size_t room =
      static_cast<std::size_t>(std::max(0, limit - static_cast<int>(head + tail)));
  Tokens kept(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(head + room));
  const int at = tokens[head + room].start;
  kept.insert(kept.end(), tokens.end() - static_cast<std::ptrdiff_t>(tail), tokens.end());
  tokens = std::move(kept);
  return at;
}

class Seq2SeqModel final : public Model {
 public:
  Seq2SeqModel(std::string name, Seq2SeqNetwork network, Seq2SeqTokenizers tokenizers)
      : name_(std::move(name)),
        network_(std::move(network)),
        source_(std::move(tokenizers.source)),
        target_(std::move(tokenizers.target)) {}

  ModelInfo info() const override {
    const Seq2SeqSpec& s = network_.spec();
    ModelInfo i;
    i.name = name_;
    i.kind = s.kind;
    i.layers = s.encoder.layers;
    i.heads = s.encoder.heads;
    i.decoder_layers = s.decoder.layers;
    i.decoder_heads = s.decoder.heads;
    i.pieces = source_->piece_encoding();
    i.capabilities.predictions = true;
    i.capabilities.cross_attention = true;
    return i;
  }

  Tokens tokenize(const std::string& text) const override {
    return source_->encode(text, /*add_special_tokens=*/true);
  }

  AttentionTrace run(const std::string& text, Backend& backend) const override {
    return run_translation(text, std::nullopt, backend, 64);
  }

  AttentionTrace run_translation(const std::string& source,
                                 const std::optional<std::string>& target, Backend& backend,
                                 int max_new_tokens) const override {
    const auto t0 = std::chrono::steady_clock::now();
    const Seq2SeqSpec& s = network_.spec();
    if (max_new_tokens < 0) throw UsageError("the number of new tokens must be >= 0");
    AttentionTrace trace;
    trace.model = info();
    trace.backend = backend.name();
    trace.text = source;
    Tokens tokens = tokenize(source);
    trace.truncated_at_byte = cut_keeping_specials(tokens, s.max_source_tokens);
    check_tokens_embedded(tokens, s.vocab);
    if (tokens.empty())
      throw UsageError(s.kind + ": the source gives no tokens (the tokenizer adds no </s>)");

    Seq2SeqState state;
    Seq2SeqEncoderOutputs enc = network_.encode(token_ids(tokens), state, backend);
    trace.tokens = std::move(tokens);
    trace.attention = std::move(enc.attention);

    auto decoder = std::make_shared<DecoderTrace>();
    decoder->tokens.push_back(start_token());
    if (target) {
      Tokens t = target_->encode(*target, /*add_special_tokens=*/true);
      if (static_cast<int>(t.size()) + 1 > s.max_target_tokens)
        throw UsageError("the target has " + std::to_string(t.size()) + " tokens; " + s.kind +
                         " decodes at most " + std::to_string(s.max_target_tokens - 1) +
                         " after the start token");
      check_tokens_embedded(t, s.decoder_vocab);
      decoder->tokens.insert(decoder->tokens.end(), t.begin(), t.end());
    } else {
      greedy(state, backend, max_new_tokens, decoder->tokens);
    }

    // One teacher-forced pass over the decoder's tokens: every head's rows and the predictions.
    Seq2SeqState forced = state;
    forced.restart();
    Seq2SeqDecoderOutputs out = network_.decode(token_ids(decoder->tokens), forced, backend,
                                                /*keep_attention=*/true, /*all_logits=*/true);
    decoder->attention = std::move(out.attention);
    decoder->cross_attention = std::move(out.cross_attention);
    for (int i = 0; i < out.logits.rows(); ++i)
      decoder->predictions.push_back(predictions(out.logits, i));
    trace.predictions = decoder->predictions.back();
    trace.decoder = std::move(decoder);
    trace.compute_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return trace;
  }

 private:
  Token start_token() const {
    Token t;
    t.id = network_.spec().decoder_start_id;
    t.text = unicode::printable_utf8(target_->id_to_token(t.id));
    t.special = true;
    return t;
  }

  std::vector<Prediction> predictions(const Matrix& logits, int row) const {
    std::vector<Prediction> top = DecoderNetwork::top_predictions(logits, row, 10);
    for (Prediction& p : top) p.text = unicode::printable_utf8(target_->decode(p.id));
    return top;
  }

  // Greedy decoding, as Hugging Face's generate(num_beams=1, do_sample=False) and
  // tools/reference/seq2seq_reference.py do it: the arg max of each step's logits after the
  // processors of the generation settings (process_logits), until eos_token_id (kept) or
  // `max_new_tokens` tokens. Each step runs one token through the decoder's KV cache.
  void greedy(Seq2SeqState& state, Backend& backend, int max_new_tokens, Tokens& tokens) const {
    const Seq2SeqSpec& s = network_.spec();
    const int limit = std::min(max_new_tokens, s.max_target_tokens - 1);
    std::vector<int> ids{s.decoder_start_id};
    std::string text;  // the generated tokens' text, which their offsets point into
    Seq2SeqDecoderOutputs out =
        network_.decode(ids, state, backend, /*keep_attention=*/false, /*all_logits=*/false);
    for (int produced = 0; produced < limit; ++produced) {
      RowVector logits = out.logits.row(0);
      process_logits(s, ids, limit + 1, logits);
      Eigen::Index best = 0;
      logits.maxCoeff(&best);  // the first of equal maxima: the lowest id
      const int id = static_cast<int>(best);
      Token t;
      t.id = id;
      t.text = unicode::printable_utf8(target_->id_to_token(id));
      t.start = static_cast<int>(text.size());
      text += target_->decode(id);
      t.end = static_cast<int>(text.size());
      t.generated = true;
      tokens.push_back(std::move(t));
      ids.push_back(id);
      if (id == s.eos_id || produced + 1 == limit) break;
      out = network_.decode({id}, state, backend, false, false);
    }
  }

  // GenerationMixin._get_logits_processor's processors, in its order, on the logits that follow
  // `ids` (the decoder's ids so far, the start token first). max_length = 1 + the new tokens
  // allowed, as generate sets it for an encoder-decoder's one start token.
  static void process_logits(const Seq2SeqSpec& s, const std::vector<int>& ids, int max_length,
                             RowVector& logits) {
    constexpr float kBanned = -std::numeric_limits<float>::infinity();
    const int cur_len = static_cast<int>(ids.size());
    const int vocab = static_cast<int>(logits.size());
    auto ban = [&](int id) {
      if (id >= 0 && id < vocab) logits[id] = kBanned;
    };
    // NoRepeatNGramLogitsProcessor: a token that would complete an n-gram the ids already hold.
    if (const int n = s.no_repeat_ngram_size; n > 0 && cur_len + 1 >= n) {
      const auto tail = ids.end() - (n - 1);
      for (int i = 0; i + n <= cur_len; ++i)
        if (std::equal(tail, ids.end(), ids.begin() + i)) ban(ids[i + n - 1]);
    }
    // NoBadWordsLogitsProcessor: the last token of a sequence whose other tokens end the ids.
    for (const std::vector<int>& bad : s.bad_words) {
      const std::size_t prefix = bad.size() - 1;
      if (prefix <= ids.size() &&
          std::equal(bad.begin(), bad.end() - 1, ids.end() - static_cast<std::ptrdiff_t>(prefix)))
        ban(bad.back());
    }
    // MinLengthLogitsProcessor: no end before min_length ids.
    if (s.min_length > 0 && cur_len < s.min_length) ban(s.eos_id);
    // ForcedBOSTokenLogitsProcessor and ForcedEOSTokenLogitsProcessor: one token allowed.
    auto force = [&](int id) {
      if (id < 0 || id >= vocab) return;
      logits.setConstant(kBanned);
      logits[id] = 0.0f;
    };
    if (s.forced_bos_id >= 0 && cur_len == 1) force(s.forced_bos_id);
    if (s.forced_eos_id >= 0 && cur_len == max_length - 1) force(s.forced_eos_id);
  }

  std::string name_;
  Seq2SeqNetwork network_;
  std::shared_ptr<const Tokenizer> source_, target_;
};

}  // namespace

Seq2SeqTokenizers load_seq2seq_tokenizers(const fs::path& folder, const Seq2SeqSpec& spec) {
  if (spec.tokenizer == Seq2SeqTokenizer::kMarian) {
    // source.spm for the encoder's text, target.spm for the decoder's (HF's text_target).
    MarianTokenizers marian = load_marian_tokenizers(folder);
    return {std::move(marian.source), std::move(marian.target)};
  }
  if (!has_tokenizer_files(folder))
    throw ModelError(folder.string() + ": no tokenizer found (a " + spec.kind +
                     " model needs tokenizer.json, or vocab.json + merges.txt)");
  std::shared_ptr<const Tokenizer> t = load_tokenizer(folder);
  return {t, t};
}

std::shared_ptr<const Model> load_seq2seq_model(const fs::path& folder, Seq2SeqSpec spec,
                                                const ProgressFn& progress) {
  apply_generation_config(spec, folder);
  Seq2SeqTokenizers tokenizers = load_seq2seq_tokenizers(folder, spec);
  Seq2SeqNetwork network = Seq2SeqNetwork::load(folder, std::move(spec), progress);
  return std::make_shared<Seq2SeqModel>(model_name_from_folder(folder), std::move(network),
                                        std::move(tokenizers));
}

}  // namespace attnscope

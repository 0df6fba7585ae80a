#pragma once
// The built-in lesson model: the seed's plain attention with Q = K = V = X, the words' real vectors
// (assets/lesson_vectors.bin, built from Debian's text corpora by tools/build_word_vectors).
//
// Defined behaviour for odd input (tests/unit/lesson_model_test.cpp):
//  - text is split by word_tokenize (core/text/word_tokenizer.h) and cut after kLessonMaxTokens
//    tokens; the trace then records truncated_at_byte (where the first dropped token starts);
//  - a token that is not in the vocabulary (unknown word, punctuation, invalid UTF-8) stays a token
//    with id -1 and `unknown` set. Its vector is zero (plus the positional encoding when that is
//    on). With mask_unknown (default) it is masked as a key, so it receives no attention: a word
//    with no meaning has nothing to give. As a query, a zero vector scores 0 against every key, so
//    it spreads its attention evenly over the keys it may see;
//  - a query that may see no key at all (a single word with exclude-self, or only unknown keys)
//    has an all-zero row, as the attention contract says for fully masked rows;
//  - empty text gives a trace with no tokens and h empty 0 x 0 matrices.
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace attnscope {

inline constexpr int kLessonMaxTokens = 512;

// How the lesson model's heads are made (when there are two or more), all from the same word
// vectors and positions:
//  - kRoles (the default): head 1 follows meaning (q = k = v = the word vectors, seen through its
//    subspace), head 2 follows position (q = k = the sinusoidal positional encodings, v = the word
//    vectors: each word looks at its neighbours and gathers their meaning), heads 3.. are random
//    subspaces of the word vectors (as in kRandom). Each head's recipe is lesson_head_recipe().
//  - kRandom: every head is a random subspace of the same vectors (they tend to look alike).
enum class HeadDesign { kRoles, kRandom };
const char* head_design_name(HeadDesign design);  // "roles" | "random"
// Throws UsageError for any other name.
HeadDesign parse_head_design(const std::string& name);

struct LessonOptions {
  float beta = 5.0f;      // sharpness: X scaled by √(β·√d) so the logit is β·cos
  bool mask_self = true;  // exclude self (diagonal mask)
  bool scale = true;  // divide by √d_k (the scaling of X stays: off makes logits √d_k sharper)
  bool causal = false;       // causal mask
  bool positional = false;   // add sinusoidal positional encoding to X (scaled to unit length)
  int heads = 1;             // h heads, each through a fixed seeded random orthogonal projection
  bool mask_unknown = true;  // unknown tokens receive no attention (see above)
  HeadDesign head_design = HeadDesign::kRoles;  // what each head is made of (see above)
};

// What head `head` of a lesson model with `options` is made of: a short role ("meaning",
// "position", "mixed") and one sentence a teacher can read out. The trace records both per head in
// model.options ("head_roles", "head_recipes").
struct HeadRecipe {
  std::string role;
  std::string recipe;
};
HeadRecipe lesson_head_recipe(const LessonOptions& options, int head);

// The positional encoding the lesson model uses (Vaswani et al. 2017's sinusoids), `dim` wide and
// scaled to unit length: [1 x dim]. Nearby positions have similar encodings.
RowVector lesson_positional_encoding(int position, int dim);
// The position head's encodings use this base instead of 10000 (the longest wave is 2π·30 words
// instead of 2π·10000): the lesson's sentences are short, and with the faster waves the similarity
// of two positions falls off within two or three words, so the head visibly follows neighbours.
inline constexpr double kPositionHeadBase = 30.0;
RowVector lesson_positional_encoding(int position, int dim, double base);

// Loads the word vectors once per process (thread-safe) and shares them between models; throws
// ModelError if the asset is missing or corrupt, UsageError for options out of range (β must be in
// [0, 1000]; heads must divide the vector dimension 128: 1, 2, 4, 8, 16, 32, 64 or 128).
std::shared_ptr<const Model> make_lesson_model(const LessonOptions& options = {});

// The projection head h of `heads` sees X through: [dim x dim/heads] with orthonormal columns.
// One head: the identity (a rotation would change nothing). More heads: disjoint column blocks of
// one random orthogonal matrix drawn from a fixed seed, so every run shows the same heads.
Matrix lesson_head_projection(int heads, int head, int dim);

struct Neighbor {
  std::string word;
  float similarity = 0.0f;  // cosine
};
// The article's claim made visible: nearest vocabulary words of token `index`'s static vector and
// of its context-enriched output (weights·V, heads concatenated) in `trace` (a lesson trace).
// The token's own word is left out of both lists. An unknown token has no static neighbours; an
// index out of range or a trace without steps gives empty lists.
struct MeaningShift {
  std::vector<Neighbor> static_neighbors;
  std::vector<Neighbor> context_neighbors;
};
MeaningShift lesson_meaning_shift(const AttentionTrace& trace, int index, int k = 8);
// lesson_meaning_shift of every token of `trace` ([i] is token i's), each head's projection built
// once: what the app's worker publishes with a lesson trace, so no view computes it.
std::vector<MeaningShift> lesson_meaning_shifts(const AttentionTrace& trace, int k = 8);

// Token `index`'s context-enriched output mapped back into word-vector space (Σ_h output_h·R_hᵀ),
// [1 x dim]; zero when the trace has no steps for it. What lesson_meaning_shift ranks against.
RowVector lesson_context_vector(const AttentionTrace& trace, int index);

// The preset ambiguous-word sentence pairs shipped in assets/presets.json (bank, mouse, bass, …).
struct PresetPair {
  std::string word;    // the ambiguous word
  std::string text1;   // sense 1 sentence
  std::string sense1;  // e.g. "river"
  std::string text2;   // sense 2 sentence
  std::string sense2;  // e.g. "money"
  // Cue words that stand for each sense; the preset test asks which mean the enriched word is
  // closer to.
  std::vector<std::string> cues1, cues2;
};
// Throws ModelError when presets.json is missing or malformed.
std::vector<PresetPair> lesson_presets();

}  // namespace attnscope

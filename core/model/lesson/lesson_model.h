#pragma once
// The built-in lesson model: the seed's plain attention with Q = K = V = X, the words' real vectors
// (assets/lesson_vectors.bin, built from Debian's text corpora by tools/build_word_vectors).
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace attnscope {

struct LessonOptions {
  float beta = 5.0f;        // sharpness: X scaled by √(β·√d) so the logit is β·cos
  bool mask_self = true;    // exclude self (diagonal mask)
  bool scale = true;        // divide by √d_k
  bool causal = false;      // causal mask
  bool positional = false;  // add sinusoidal positional encoding to X
  int heads = 1;            // h heads, each through a fixed seeded random orthogonal projection
};

// Loads the word vectors once per process (thread-safe) and shares them between models; throws
// ModelError if the asset is missing or corrupt.
std::shared_ptr<const Model> make_lesson_model(const LessonOptions& options = {});

struct Neighbor {
  std::string word;
  float similarity = 0.0f;  // cosine
};
// The article's claim made visible: nearest vocabulary words of token `index`'s static vector and
// of its context-enriched output (weights·V, heads concatenated) in `trace` (a lesson trace).
struct MeaningShift {
  std::vector<Neighbor> static_neighbors;
  std::vector<Neighbor> context_neighbors;
};
MeaningShift lesson_meaning_shift(const AttentionTrace& trace, int index, int k = 8);

// The preset ambiguous-word sentence pairs shipped in assets/ (bank, mouse, bass, …).
struct PresetPair {
  std::string word;     // the ambiguous word
  std::string text1;    // sense 1 sentence
  std::string sense1;   // e.g. "river"
  std::string text2;    // sense 2 sentence
  std::string sense2;   // e.g. "money"
};
std::vector<PresetPair> lesson_presets();

}  // namespace attnscope

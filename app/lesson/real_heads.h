#pragma once
// What the guided lesson says about a real model's heads and positions (steps 7 and 8 when a GPT-2,
// BERT or decoder was loaded before the lesson): each head's pattern in a teacher's words, read
// from its head summaries (core/analysis/head_summary.h); the layer whose heads differ most; the
// head that follows word order most clearly. Pure functions: no ImGui, no model.
#include <string>
#include <vector>

#include "core/analysis/head_summary.h"
#include "core/model/hf/hf_families.h"
#include "core/model/intervention.h"  // HeadRef

namespace attnscope {

using HeadSummaries = std::vector<std::vector<HeadSummary>>;  // [layer][head]

enum class HeadBehaviour { kPreviousWord, kFirstToken, kItself, kSpreadOut, kFewWords };

// The pattern a head's summary shows most: the previous token, the first token or the token itself
// when one of them gets at least kHeadBehaviourMass of the attention on average (the largest of the
// three); else "spread out" when its entropy is at least kSpreadEntropy of the uniform row's
// (log2 of the `tokens` keys), else "a few words".
inline constexpr float kHeadBehaviourMass = 0.4f;
inline constexpr float kSpreadEntropy = 0.6f;
HeadBehaviour head_behaviour(const HeadSummary& s, int tokens);
const char* head_behaviour_words(HeadBehaviour b);  // "looks at the previous word"
const char* head_behaviour_short(HeadBehaviour b);  // "previous word": under a small thumbnail

// The layer whose heads differ most: the most distinct behaviours among its heads, ties broken by
// the summed variance over its heads of the previous-token, first-token, diagonal scores and the
// entropy relative to uniform, then by the lower layer. -1 for no layers.
int most_varied_layer(const HeadSummaries& s, int tokens);

// The head with the largest previous-token score (the first of equals): where order shows most;
// layer -1 for no heads.
HeadRef strongest_previous_token_head(const HeadSummaries& s);

// One or two sentences for a class: how a model of this scheme knows where each word is. `name`
// names the model. Empty for kUnknown.
std::string position_scheme_words(PositionScheme scheme, const std::string& name);

}  // namespace attnscope

#include "app/lesson/real_heads.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace attnscope {

namespace {
// Entropy as a fraction of the uniform row's, log2(tokens); 0 for one token.
float relative_entropy(const HeadSummary& s, int tokens) {
  return tokens >= 2 ? s.entropy / std::log2(static_cast<float>(tokens)) : 0.0f;
}
}  // namespace

HeadBehaviour head_behaviour(const HeadSummary& s, int tokens) {
  HeadBehaviour best = HeadBehaviour::kPreviousWord;
  float mass = s.previous_token;
  if (s.first_token_mass > mass) best = HeadBehaviour::kFirstToken, mass = s.first_token_mass;
  if (s.diagonal > mass) best = HeadBehaviour::kItself, mass = s.diagonal;
  if (mass >= kHeadBehaviourMass) return best;
  return relative_entropy(s, tokens) >= kSpreadEntropy ? HeadBehaviour::kSpreadOut
                                                       : HeadBehaviour::kFewWords;
}

namespace {
// Each behaviour's words, in HeadBehaviour's order: the caption, and its short form.
struct BehaviourWords {
  const char* words;
  const char* short_words;
};
constexpr BehaviourWords kBehaviourWords[] = {
    {"looks at the previous word", "previous word"},
    {"rests on the first token", "first token"},
    {"looks at the word itself", "itself"},
    {"spread out over the sentence", "spread out"},
    {"picks a few words", "a few words"},
};
}  // namespace

const char* head_behaviour_words(HeadBehaviour b) {
  return kBehaviourWords[static_cast<int>(b)].words;
}

const char* head_behaviour_short(HeadBehaviour b) {
  return kBehaviourWords[static_cast<int>(b)].short_words;
}

int most_varied_layer(const HeadSummaries& s, int tokens) {
  int best = -1;
  double best_score = -1;
  for (int l = 0; l < static_cast<int>(s.size()); ++l) {
    const auto& heads = s[l];
    if (heads.empty()) continue;
    std::set<HeadBehaviour> kinds;
    for (const HeadSummary& h : heads) kinds.insert(head_behaviour(h, tokens));
    // The variances are at most 0.25 each (values in [0, 1]): below one distinct behaviour.
    double variance = 0;
    const auto features = {+[](const HeadSummary& h, int) { return h.previous_token; },
                           +[](const HeadSummary& h, int) { return h.first_token_mass; },
                           +[](const HeadSummary& h, int) { return h.diagonal; },
                           +[](const HeadSummary& h, int n) { return relative_entropy(h, n); }};
    for (auto f : features) {
      double mean = 0, sq = 0;
      for (const HeadSummary& h : heads) mean += f(h, tokens);
      mean /= heads.size();
      for (const HeadSummary& h : heads) sq += (f(h, tokens) - mean) * (f(h, tokens) - mean);
      variance += sq / heads.size();
    }
    const double score = static_cast<double>(kinds.size()) + std::min(variance, 0.99);
    if (score > best_score) best = l, best_score = score;
  }
  return best;
}

HeadRef strongest_previous_token_head(const HeadSummaries& s) {
  HeadRef best{-1, -1};
  float score = -1;
  for (int l = 0; l < static_cast<int>(s.size()); ++l)
    for (int h = 0; h < static_cast<int>(s[l].size()); ++h)
      if (s[l][h].previous_token > score) best = {l, h}, score = s[l][h].previous_token;
  return best;
}

std::string position_scheme_words(PositionScheme scheme, const std::string& name) {
  switch (scheme) {
    case PositionScheme::kLearned:
      return name +
             " learned one position vector for each place (1st, 2nd, 3rd \xE2\x80\xA6) and adds it "
             "to each word's vector.";
    case PositionScheme::kRotary:
      return name +
             " turns each query and key by an angle that grows with the word's place (rotary "
             "positions, RoPE): a score depends on how far apart the two words are.";
    case PositionScheme::kUnknown:
      break;
  }
  return "";
}

}  // namespace attnscope

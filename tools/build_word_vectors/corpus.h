#pragma once
// Corpus readers for build_word_vectors: each turns one Debian text source into documents of
// lowercase ASCII words (runs of a-z with internal apostrophes; possessive 's dropped), the same
// word shape the lesson model's tokenizer looks up at run time.
#include <functional>
#include <string>
#include <vector>

namespace wordvec {

// Called once per document (a dictionary paragraph, a WordNet synset, a fortune cookie).
using DocumentSink = std::function<void(const std::vector<std::string>& words)>;

// Splits running text into words and appends them to `out`.
void split_words(const std::string& text, std::vector<std::string>& out);

// Returns the number of documents read. Throws std::runtime_error when a file cannot be read.
long read_gcide(const std::string& path, const DocumentSink& sink);    // gcide.dict.dz
long read_devil(const std::string& path, const DocumentSink& sink);    // devil.dict.dz
long read_wordnet(const std::string& dir, const DocumentSink& sink);   // data.{noun,verb,adj,adv}
long read_fortunes(const std::string& dir, const DocumentSink& sink);  // cookie files

// GCIDE markup removal, exposed for testing by hand: pronunciations \…\, [brackets] (nested),
// accent codes like [a^] kept as their letter, {cross refs} kept as text, "--Author." dropped.
std::string strip_gcide_markup(const std::string& paragraph);

}  // namespace wordvec

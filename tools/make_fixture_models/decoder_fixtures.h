#pragma once
// The tiny decoder fixtures (Llama, SmolLM, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3, SmolLM3,
// OLMo 2): random weights in the real Hugging Face layouts, with the real tokenizer files where
// they are found.
#include <filesystem>

namespace fixture {

// Writes every decoder fixture folder under `out`. `npm` is tests/data/npm (tokenizer packages
// llama3, qwen3, gemma3, mistral from scripts/fetch_test_data.sh); a missing tokenizer leaves the
// folder without one (the id-based golden tests need none). Returns how many got a tokenizer.
int write_decoder_fixtures(const std::filesystem::path& out, const std::filesystem::path& npm);

}  // namespace fixture

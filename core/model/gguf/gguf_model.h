#pragma once
// Models from GGUF files (llama.cpp, Ollama, LM Studio): finding them, reading the architecture's
// metadata into a DecoderSpec, the tensors as (quantised) weight views of the mapping, and the
// tokenizer from tokenizer.ggml.*.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/registry.h"

namespace attnscope {

// The GGUF file `spec` names, if it names one: a path to a .gguf file, a folder holding exactly one
// .gguf (several: UsageError listing them), an Ollama name ("llama3.2:1b", "user/model:tag") found
// under $OLLAMA_MODELS or ~/.ollama/models, or an LM Studio model under ~/.lmstudio/models or
// ~/.cache/lm-studio/models ("publisher/repo", "publisher/repo/file.gguf"). nullopt: not a GGUF
// spec (open_model then tries Hugging Face).
std::optional<std::filesystem::path> resolve_gguf_spec(const std::string& spec);

// Opens a GGUF model. Throws ModelError naming the file and problem (an architecture or tensor type
// attnscope does not read: one line naming it).
std::shared_ptr<const Model> open_gguf_model(const std::filesystem::path& file,
                                             const ProgressFn& progress = {});

// Every GGUF found in the places above, with architecture, size and quantisation in the note.
std::vector<ModelListing> list_gguf_models();

}  // namespace attnscope

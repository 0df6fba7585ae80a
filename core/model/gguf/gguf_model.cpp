// Opening a GGUF model: the network from the file's architecture and tensors (gguf_archs.cpp,
// gguf_weights.cpp) and the tokenizer from its tokenizer.ggml.* metadata, giving llama.cpp's ids.
#include "core/model/gguf/gguf_model.h"

#include <new>

#include "core/model/decoder/decoder_model.h"
#include "core/model/gguf/gguf_archs.h"
#include "core/model/gguf/gguf_vocab.h"
#include "core/text/llama_cpp_tokenizer.h"
#include "core/util/error.h"

namespace attnscope {

std::shared_ptr<const Model> open_gguf_model(const std::filesystem::path& file,
                                             const ProgressFn& progress) {
  try {
    GgufNetwork g = load_gguf_network(file, progress);
    if (progress) progress(1.0, "reading the tokenizer of " + file.string());
    std::shared_ptr<const Tokenizer> tokenizer =
        make_llama_cpp_tokenizer(read_gguf_vocab(*g.file), file.string());
    return make_decoder_model(std::move(g.name), std::move(g.network), std::move(tokenizer),
                              std::move(g.source));
  } catch (const std::bad_alloc&) {
    // Every size is checked against the file before anything is allocated: a real model larger
    // than this machine's memory.
    throw ModelError(file.string() + ": not enough memory to load this model");
  }
}

}  // namespace attnscope

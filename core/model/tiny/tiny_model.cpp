#include "core/model/tiny/tiny_model.h"

#include "core/model/decoder/decoder_model.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/assets.h"
#include "core/util/error.h"

namespace attnscope {

namespace fs = std::filesystem;

fs::path tiny_model_folder() {
  // find_asset looks for files; the folder is the one holding the config.
  return find_asset("tiny_model/config.json").parent_path();
}

std::shared_ptr<const Model> open_tiny_model(const ProgressFn& progress) {
  const fs::path folder = tiny_model_folder();
  const nlohmann::json config = read_model_config(folder);
  return load_decoder_model(folder, llama_spec(config, folder / "config.json"), progress,
                            kTinyModelSpec);
}

ModelListing tiny_model_listing() {
  ModelListing m;
  m.spec = kTinyModelSpec;
  m.where = "built-in";
  m.title = kTinyModelTitle;
  try {
    m.kind = "llama";
    m.note = std::string(kTinyModelTitle) + ", trained on Debian text, no download (" +
             tiny_model_folder().string() + ")";
  } catch (const Error& e) {
    m.kind = "unsupported";
    m.note = std::string(kTinyModelTitle) + ": " + e.what();
  }
  return m;
}

}  // namespace attnscope

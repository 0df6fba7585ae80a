#include "core/model/stories/stories_model.h"

#include "core/model/decoder/decoder_model.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/assets.h"
#include "core/util/error.h"

namespace attnscope {

namespace fs = std::filesystem;

fs::path stories_model_folder() {
  // find_asset looks for files; the folder is the one holding the config.
  return find_asset("stories260K/config.json").parent_path();
}

std::shared_ptr<const Model> open_stories_model(const ProgressFn& progress) {
  const fs::path folder = stories_model_folder();
  const nlohmann::json config = read_model_config(folder);
  return load_decoder_model(folder, llama_spec(config, folder / "config.json"), progress,
                            kStoriesModelSpec);
}

ModelListing stories_model_listing() {
  ModelListing m;
  m.spec = kStoriesModelSpec;
  m.where = "built-in";
  m.title = kStoriesModelTitle;
  try {
    m.kind = "llama";
    m.note = std::string(kStoriesModelTitle) +
             ", writes English (stories260K, MIT), no download (" +
             stories_model_folder().string() + ")";
  } catch (const Error& e) {
    m.kind = "unsupported";
    m.note = kStoriesModelTitle;
    m.note += ": ";
    m.note += e.what();
  }
  return m;
}

}  // namespace attnscope

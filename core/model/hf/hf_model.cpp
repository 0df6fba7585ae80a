// Opening a Hugging Face model folder: resolve the spec (hub_cache.h), read config.json, check the
// weights are safetensors, then hand the folder to the family's loader.
#include "core/model/hf/hf_model.h"

#include <new>

#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

std::string pytorch_only_message(const fs::path& folder) {
  const std::string f = folder.string();
  return f +
         " holds only pytorch_model.bin; attnscope reads model.safetensors (it never unpickles "
         "PyTorch files). Convert it once with Python and transformers: python3 -c \"from "
         "transformers import AutoModel; AutoModel.from_pretrained('" +
         f + "').save_pretrained('" + f + "', safe_serialization=True)\"";
}

// The spec as a user would type it again: the id when it resolves to this very folder, else the
// folder's path.
std::string spec_for(const ModelFolder& found) {
  try {
    std::error_code ec;
    if (fs::equivalent(resolve_model_spec(found.repo_id), found.folder, ec)) return found.repo_id;
  } catch (const Error&) {
  }
  return fs::absolute(found.folder).string();
}

// Weights that are there but cannot be opened (a symlink loop, a dangling link, no permission, a
// FIFO) are named with what is wrong, not reported as absent.
std::string missing_weights_message(const fs::path& folder) {
  for (const char* name : {"model.safetensors", "model.safetensors.index.json"}) {
    const fs::path path = folder / name;
    if (!path_present(path)) continue;
    std::string problem = path_problem(path);
    if (problem.empty()) problem = regular_file_problem(path);
    if (!problem.empty()) return path.string() + " " + problem;
  }
  return folder.string() +
         " has no model.safetensors (nor model.safetensors.index.json); download the model again "
         "with `attnscope download ID`";
}

}  // namespace

std::shared_ptr<const Model> open_hf_model(const std::string& spec, const ProgressFn& progress) {
  auto report = [&](double fraction, const std::string& what) {
    if (progress) progress(fraction, what);
  };
  report(0.0, "finding model " + spec);
  const fs::path folder = resolve_model_spec(spec);
  report(0.0, "reading " + (folder / "config.json").string());
  const nlohmann::json config = read_model_config(folder);
  const HfFamily* family = find_hf_family(config);
  if (!family) {
    throw ModelError("model type " + model_type_name(config) +
                     " is not supported yet (attnscope opens " + hf_family_names() +
                     "): " + folder.string());
  }
  switch (find_weights(folder)) {
    case WeightsStatus::safetensors:
      break;
    case WeightsStatus::pytorch_only:
      throw ModelError(pytorch_only_message(folder));
    case WeightsStatus::missing:
      throw ModelError(missing_weights_message(folder));
  }
  const std::string ignored = ignored_parts_note(config);
  report(0.0, "loading " + family->model_type + " model from " + folder.string() +
                  (ignored.empty() ? std::string() : " (" + ignored + ")"));
  try {
    return family->load(folder, config, progress);
  } catch (const std::bad_alloc&) {
    // Sizes are checked against config.json and the file before allocating; this is a model that
    // is real but larger than this machine's memory.
    throw ModelError(folder.string() + ": not enough memory to load this " + family->model_type +
                     " model");
  }
}

std::vector<ModelListing> list_hf_models() {
  std::vector<ModelListing> out;
  for (const ModelFolder& found : find_model_folders()) {
    ModelListing m;
    m.where = found.folder.string();
    if (!found.has_snapshot) {
      m.spec = found.repo_id;
      m.kind = "unsupported";
      m.note =
          "no snapshot (interrupted download?): run `attnscope download " + found.repo_id + "`";
    } else {
      FolderInspection look = inspect_model_folder(found.folder);
      m.spec = spec_for(found);
      m.kind = look.kind;
      m.note = look.note;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace attnscope

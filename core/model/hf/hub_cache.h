#pragma once
// Where Hugging Face model folders live and how a model spec names one (shared/DESIGN.md).
//
// A spec is either a path to a folder (absolute, relative, or starting with `~`) or a repo id
// ("gpt2", "openai-community/gpt2"). Repo ids are looked up in two roots:
//   1. ./models (project-local): plain folders ./models/NAME or ./models/ORG/NAME, and also the
//      hub layout (./models/models--ORG--NAME/...), so `attnscope download --cache ./models` works;
//   2. the Hugging Face hub cache: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE (the old name),
//      else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
//      (huggingface_hub's constants.py, `~` and $VARS expanded as it does), with the layout
//      huggingface_hub writes: models--ORG--NAME/snapshots/<commit>/FILE (a relative symlink into
//      blobs/, or a plain file as attnscope wrote them before issue 25) and refs/main naming the
//      commit to use.
// Exact names win over fuzzy ones: a bare NAME first matches ./models/NAME or models--NAME, and
// only then any models--ORG--NAME whose NAME part matches, if exactly one does (the hub moved
// "gpt2" to "openai-community/gpt2" and "bert-base-uncased" to "google-bert/bert-base-uncased").
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope {

// `~` and `~/…` expanded with $HOME; anything else returned unchanged.
std::filesystem::path expand_user(const std::string& path);

// `~` expanded, then $NAME and ${NAME} replaced by the variable's value (unset ones left as they
// are): Python's os.path.expandvars(os.path.expanduser(path)), as huggingface_hub reads its paths.
std::filesystem::path expand_user_and_vars(const std::string& path);

// The hub cache folder from the environment (see above). It need not exist.
std::filesystem::path default_hub_cache();

// huggingface_hub's HF_HOME: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
// ~/.cache/huggingface.
std::filesystem::path hf_home();

// The token file `hf auth login` (`huggingface-cli login`) writes: $HF_TOKEN_PATH, else
// hf_home()/token.
std::filesystem::path hub_token_path();

// Offline mode as huggingface_hub reads it: $HF_HUB_OFFLINE, or when that is unset or empty
// $TRANSFORMERS_OFFLINE, is 1, ON, YES or TRUE in any case. Returns how it was turned on
// ("HF_HUB_OFFLINE=1"), or "" when it is off. Offline, attnscope opens no connection at all.
std::string hub_offline_setting();

// The project-local model folder: ./models relative to the current directory.
std::filesystem::path project_models_dir();

// "openai-community/gpt2" -> "models--openai-community--gpt2"; "gpt2" -> "models--gpt2".
std::string repo_folder_name(const std::string& repo_id);
// The inverse: "models--openai-community--gpt2" -> "openai-community/gpt2"; nullopt when the name
// is not a model repo folder.
std::optional<std::string> repo_id_from_folder_name(const std::string& folder_name);

// The snapshot of a repo folder (models--ORG--NAME) to open: the one refs/main names if it exists,
// else the snapshot holding config.json that was modified last, else the newest snapshot.
std::optional<std::filesystem::path> pick_snapshot(const std::filesystem::path& repo_dir);

// A model folder found on disk: the folder itself and how a user names it.
struct ModelFolder {
  std::filesystem::path folder;  // the folder holding config.json (a snapshot for hub repos); for a
                                 // hub repo without any snapshot, the repo folder itself
  std::string repo_id;           // "openai-community/gpt2" for hub repos, "NAME" for ./models/NAME
  bool has_snapshot = true;      // false: a hub repo folder with no snapshot (interrupted download)
};

// Resolves a spec to a folder. Throws UsageError naming every place it looked and suggesting
// `attnscope download ID` / `attnscope models` when nothing matches, or listing the candidates when
// a bare NAME matches several repos.
std::filesystem::path resolve_model_spec(const std::string& spec);

// Every model folder under the roots above (hub repos without any snapshot included, with an empty
// folder, so a listing can mention them).
std::vector<ModelFolder> find_model_folders();

// config.json of a model folder. Throws ModelError naming the file when missing or not JSON.
nlohmann::json read_model_config(const std::filesystem::path& folder);

// The model_type of a family attnscope opens (hf_families.h: from model_type, else from
// architectures such as "GPT2LMHeadModel"); "" for anything else.
std::string model_family(const nlohmann::json& config);
// What to call an unsupported model in messages: model_type, else architectures[0], else "unknown".
std::string model_type_name(const nlohmann::json& config);
// What of a model attnscope leaves out, said where the model is listed and loaded: "text model
// only; the vision tower is not loaded" for a multimodal checkpoint (a vision_config beside the
// text model, as Gemma 3 4B and larger have); "" when it shows the whole model.
std::string ignored_parts_note(const nlohmann::json& config);

enum class WeightsStatus { safetensors, pytorch_only, missing };
// model.safetensors or a sharded model.safetensors.index.json present; else whether only PyTorch
// pickles (pytorch_model.bin, which attnscope does not read) are there.
WeightsStatus find_weights(const std::filesystem::path& folder);

// What a model folder holds, for listings. Never throws: problems end up in `note`.
struct FolderInspection {
  std::string kind;  // "gpt2" | "bert" | "unsupported"
  // Why it cannot be opened ("only pytorch_model.bin: convert …"), or what of it is not shown
  // (ignored_parts_note), or "".
  std::string note;
};
FolderInspection inspect_model_folder(const std::filesystem::path& folder);

}  // namespace attnscope

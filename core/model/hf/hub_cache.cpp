#include "core/model/hf/hub_cache.h"

#include "core/model/hf/hf_families.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "core/util/error.h"
#include "core/util/file_read.h"
#include "core/util/json_file.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

// The largest real config.json files are a few kB; 16 MB leaves room for odd ones and refuses
// anything meant to exhaust memory.
constexpr std::uint64_t kMaxConfigBytes = 16ull << 20;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string home_dir() {
  std::string home = env_or_empty("HOME");
  if (!home.empty()) return home;
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_dir ? pw->pw_dir : "";
  return "";
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows symlinks (hub snapshots link into blobs/)
}

// Which environment variable chose the hub cache, for error messages.
std::string hub_cache_origin() {
  if (!env_or_empty("HF_HUB_CACHE").empty()) return "$HF_HUB_CACHE";
  if (!env_or_empty("HUGGINGFACE_HUB_CACHE").empty()) return "$HUGGINGFACE_HUB_CACHE";
  if (!env_or_empty("HF_HOME").empty()) return "$HF_HOME/hub";
  if (!env_or_empty("XDG_CACHE_HOME").empty()) return "$XDG_CACHE_HOME/huggingface/hub";
  return "the default";
}

bool is_var_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Repo ids are ORG/NAME or NAME with the hub's characters; anything else is not looked up.
bool valid_repo_id(const std::string& id) {
  if (id.empty() || id.front() == '/' || id.back() == '/') return false;
  if (std::count(id.begin(), id.end(), '/') > 1) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

std::string name_part(const std::string& repo_id) {
  size_t slash = repo_id.find('/');
  return slash == std::string::npos ? repo_id : repo_id.substr(slash + 1);
}

// The hub's current id for the classic names it moved under an organization; ORG/NAME otherwise.
std::string suggested_repo_id(const std::string& spec) {
  if (spec.find('/') != std::string::npos) return spec;
  static const std::vector<std::pair<std::string, std::string>> moved = {
      {"gpt2", "openai-community"},        {"gpt2-medium", "openai-community"},
      {"gpt2-large", "openai-community"},  {"gpt2-xl", "openai-community"},
      {"distilgpt2", "distilbert"},        {"bert-base-uncased", "google-bert"},
      {"bert-base-cased", "google-bert"},  {"bert-large-uncased", "google-bert"},
      {"bert-large-cased", "google-bert"}, {"bert-base-multilingual-cased", "google-bert"},
      {"bert-base-chinese", "google-bert"}};
  for (const auto& [name, org] : moved)
    if (spec == name) return org + "/" + name;
  return "ORG/" + spec;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// The two roots repo ids are looked up in, project-local first; a root that is the same folder
// as another is listed once.
struct Root {
  fs::path dir;
  bool project_local;
};
std::vector<Root> search_roots() {
  std::vector<Root> roots = {{project_models_dir(), true}, {default_hub_cache(), false}};
  std::error_code ec;
  if (is_dir(roots[0].dir) && is_dir(roots[1].dir) &&
      fs::equivalent(roots[0].dir, roots[1].dir, ec))
    roots.pop_back();
  return roots;
}

// Lookup state: what was tried (for the error message) and repo folders without a snapshot.
struct Search {
  std::vector<std::string> looked;
  std::vector<std::string> notes;

  // A hub-layout repo folder: its snapshot, if it has one.
  std::optional<fs::path> try_repo(const fs::path& repo_dir) {
    looked.push_back(repo_dir.string());
    if (!is_dir(repo_dir)) return std::nullopt;
    std::optional<fs::path> snap = pick_snapshot(repo_dir);
    if (!snap) notes.push_back(repo_dir.string() + " has no snapshot (an interrupted download?)");
    return snap;
  }
  std::optional<fs::path> try_plain(const fs::path& folder) {
    looked.push_back(folder.string());
    if (is_dir(folder)) return folder;
    return std::nullopt;
  }
};

}  // namespace

fs::path expand_user(const std::string& path) {
  if (path == "~") return home_dir();
  if (path.rfind("~/", 0) == 0) return fs::path(home_dir()) / path.substr(2);
  return path;
}

fs::path expand_user_and_vars(const std::string& path) {
  const std::string in = expand_user(path).string();
  std::string out;
  for (size_t i = 0; i < in.size();) {
    if (in[i] != '$') {
      out += in[i++];
      continue;
    }
    // $NAME or ${NAME}; anything else (a lone $, an unset variable) stays as written.
    const bool braced = i + 1 < in.size() && in[i + 1] == '{';
    const size_t begin = i + (braced ? 2 : 1);
    size_t end = begin;
    while (end < in.size() && is_var_char(in[end])) ++end;
    if (end == begin || (braced && (end >= in.size() || in[end] != '}'))) {
      out += in[i++];
      continue;
    }
    const char* value = std::getenv(in.substr(begin, end - begin).c_str());
    const size_t next = braced ? end + 1 : end;
    if (value)
      out += value;
    else
      out += in.substr(i, next - i);
    i = next;
  }
  return out;
}

fs::path hf_home() {
  if (std::string v = env_or_empty("HF_HOME"); !v.empty()) return expand_user_and_vars(v);
  if (std::string v = env_or_empty("XDG_CACHE_HOME"); !v.empty())
    return expand_user_and_vars(v) / "huggingface";
  return fs::path(home_dir()) / ".cache" / "huggingface";
}

fs::path default_hub_cache() {
  if (std::string v = env_or_empty("HF_HUB_CACHE"); !v.empty()) return expand_user_and_vars(v);
  if (std::string v = env_or_empty("HUGGINGFACE_HUB_CACHE"); !v.empty())
    return expand_user_and_vars(v);
  return hf_home() / "hub";
}

fs::path hub_token_path() {
  if (std::string v = env_or_empty("HF_TOKEN_PATH"); !v.empty()) return expand_user_and_vars(v);
  return hf_home() / "token";
}

std::string hub_offline_setting() {
  // huggingface_hub: _is_true(os.environ.get("HF_HUB_OFFLINE") or
  // os.environ.get("TRANSFORMERS_OFFLINE")): the first variable wins when it is set and not
  // empty, even when it says no.
  for (const char* name : {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}) {
    const std::string value = env_or_empty(name);
    if (value.empty()) continue;
    std::string upper = value;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE")
      return std::string(name) + "=" + value;
    return "";
  }
  return "";
}

fs::path project_models_dir() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  return (ec ? fs::path(".") : cwd) / "models";
}

std::string repo_folder_name(const std::string& repo_id) {
  std::string out = "models--";
  for (char c : repo_id) {
    if (c == '/')
      out += "--";
    else
      out += c;
  }
  return out;
}

std::optional<std::string> repo_id_from_folder_name(const std::string& folder_name) {
  const std::string prefix = "models--";
  if (folder_name.rfind(prefix, 0) != 0 || folder_name.size() == prefix.size()) return std::nullopt;
  std::string rest = folder_name.substr(prefix.size());
  size_t sep = rest.find("--");
  if (sep == std::string::npos) return rest;
  if (sep == 0 || sep + 2 >= rest.size()) return std::nullopt;
  return rest.substr(0, sep) + "/" + rest.substr(sep + 2);
}

std::optional<fs::path> pick_snapshot(const fs::path& repo_dir) {
  const fs::path snapshots = repo_dir / "snapshots";
  if (!is_dir(snapshots)) return std::nullopt;
  std::string sha;
  try {  // a commit hash; anything unreadable or odd is ignored like a missing ref
    sha = read_regular_file(repo_dir / "refs" / "main", "ref", 4096);
  } catch (const FileError&) {
  }
  sha = sha.substr(0, sha.find('\n'));
  if (!sha.empty()) {
    sha.erase(sha.find_last_not_of(" \t\r\n") + 1);
    if (!sha.empty() && sha.find('/') == std::string::npos && is_dir(snapshots / sha))
      return snapshots / sha;
  }
  // No usable ref: the newest snapshot, preferring ones that hold a config.json (a complete model).
  std::optional<fs::path> best;
  bool best_has_config = false;
  fs::file_time_type best_time{};
  for (const fs::path& snap : sorted_entries(snapshots)) {
    if (!is_dir(snap)) continue;
    std::error_code ec;
    fs::file_time_type t = fs::last_write_time(snap, ec);
    bool has_config = is_file(snap / "config.json");
    if (!best || (has_config && !best_has_config) ||
        (has_config == best_has_config && t > best_time)) {
      best = snap;
      best_has_config = has_config;
      best_time = t;
    }
  }
  return best;
}

fs::path resolve_model_spec(const std::string& spec) {
  if (spec.empty()) throw UsageError("empty model spec: give a folder or a repo id such as gpt2");
  const fs::path as_path = expand_user(spec);
  const bool path_like = spec[0] == '/' || spec[0] == '.' || spec[0] == '~' || spec.back() == '/' ||
                         spec.find('\\') != std::string::npos;
  if (is_dir(as_path)) {
    // A hub repo folder itself (…/models--ORG--NAME) opens its snapshot.
    if (repo_id_from_folder_name(as_path.filename().string()) && is_dir(as_path / "snapshots")) {
      if (std::optional<fs::path> snap = pick_snapshot(as_path)) return *snap;
      throw UsageError(as_path.string() + " has no snapshot (an interrupted download?)");
    }
    // "gpt2" names a folder here only if it is a model (or clearly a path): a stray ./gpt2 source
    // folder must not hide the cached model.
    if (path_like || is_file(as_path / "config.json")) return as_path;
  }
  if (path_like) {
    std::error_code ec;
    if (fs::exists(as_path, ec))
      throw UsageError("'" + quote_excerpt(spec, 300) +
                       "' is a file; a model is a folder holding config.json");
    const std::string problem = path_problem(as_path);
    throw UsageError("model folder '" + quote_excerpt(spec, 300) + "' " +
                     (problem.empty() ? "does not exist" : problem));
  }
  // The hub's names are at most 96 characters (org and name each): a longer spec is not looked
  // up, and the message quotes only its start (a 3,000-character name made a 24,000-character
  // "looked in" list).
  if (!valid_repo_id(spec) || spec.size() > 2 * 96 + 1) {
    std::string message = "'";
    message += quote_excerpt(spec);
    message += "' is neither a folder nor a repo id such as openai-community/gpt2";
    if (spec.size() > 2 * 96 + 1)
      message += " (" + std::to_string(spec.size()) + " characters; ids have at most 193)";
    throw UsageError(message);
  }

  const std::vector<Root> roots = search_roots();
  const std::string name = name_part(spec);
  const bool has_org = name != spec;
  Search search;
  search.looked.push_back(fs::absolute(as_path).string());
  // Exact names, project-local first.
  for (const Root& root : roots) {
    if (root.project_local) {
      if (auto hit = search.try_plain(root.dir / spec)) return *hit;
    }
    if (auto hit = search.try_repo(root.dir / repo_folder_name(spec))) return *hit;
  }
  // ./models/NAME for ORG/NAME; then any models--ORG--NAME for a bare NAME, if unique.
  if (has_org) {
    if (auto hit = search.try_plain(roots[0].dir / name)) return *hit;
  } else {
    std::vector<std::pair<std::string, fs::path>> matches;
    for (const Root& root : roots) {
      search.looked.push_back((root.dir / ("models--*--" + name)).string());
      for (const fs::path& entry : sorted_entries(root.dir)) {
        std::optional<std::string> id = repo_id_from_folder_name(entry.filename().string());
        if (!id || *id == name || name_part(*id) != name || !is_dir(entry)) continue;
        if (std::optional<fs::path> snap = pick_snapshot(entry))
          matches.emplace_back(*id, *snap);
        else
          search.notes.push_back(entry.string() + " has no snapshot (an interrupted download?)");
      }
    }
    if (matches.size() == 1) return matches[0].second;
    if (matches.size() > 1) {
      std::string msg = "'" + spec + "' matches several cached models; name one of them:";
      for (const auto& [id, snap] : matches) msg += " " + id;
      throw UsageError(msg);
    }
  }
  if (is_dir(as_path)) return as_path;  // not a model folder: opening it says what is missing
  const std::string offline = hub_offline_setting();
  std::ostringstream msg;
  msg << "no model '" << spec << "' found";
  if (!offline.empty()) msg << " (offline mode is on: " << offline << ")";
  msg << ". Looked in: ";
  for (size_t i = 0; i < search.looked.size(); ++i) msg << (i ? "; " : "") << search.looked[i];
  msg << " (hub cache from " << hub_cache_origin() << ").";
  for (const std::string& note : search.notes) msg << ' ' << note << '.';
  if (!offline.empty())
    msg << " Offline mode downloads nothing: unset " << offline.substr(0, offline.find('='))
        << " and run `attnscope download " << suggested_repo_id(spec)
        << "`, or see what is here with `attnscope models`.";
  else
    msg << " Fetch it with `attnscope download " << suggested_repo_id(spec)
        << "` or see what is here with `attnscope models`.";
  throw UsageError(msg.str());
}

std::vector<ModelFolder> find_model_folders() {
  std::vector<ModelFolder> out;
  for (const Root& root : search_roots()) {
    for (const fs::path& entry : sorted_entries(root.dir)) {
      if (!is_dir(entry)) continue;
      const std::string base = entry.filename().string();
      if (std::optional<std::string> id = repo_id_from_folder_name(base)) {
        std::optional<fs::path> snap = pick_snapshot(entry);
        out.push_back({snap ? *snap : entry, *id, snap.has_value()});
      } else if (root.project_local) {
        // ./models/NAME or ./models/ORG/NAME holding a config.json.
        if (is_file(entry / "config.json")) {
          out.push_back({entry, base, true});
          continue;
        }
        for (const fs::path& sub : sorted_entries(entry)) {
          if (is_file(sub / "config.json"))
            out.push_back({sub, base + "/" + sub.filename().string(), true});
        }
      }
    }
  }
  return out;
}

nlohmann::json read_model_config(const fs::path& folder) {
  const fs::path file = folder / "config.json";
  std::string text;
  try {
    text = read_regular_file(file, "config", kMaxConfigBytes);
  } catch (const FileError& e) {
    if (e.problem != FileProblem::kMissing) throw;
    throw ModelError(file.string() + " is missing: not a Hugging Face model folder");
  }
  nlohmann::json config = parse_json_text(text, file);
  if (!config.is_object())
    throw ModelError(file.string() + " is not a JSON object (found " + json_type_name(config) +
                     ")");
  return config;
}

std::string model_family(const nlohmann::json& config) {
  const HfFamily* family = find_hf_family(config);
  return family ? family->model_type : "";
}

std::string model_type_name(const nlohmann::json& config) {
  auto type = config.find("model_type");
  if (type != config.end() && type->is_string()) return type->get<std::string>();
  auto archs = config.find("architectures");
  if (archs != config.end() && archs->is_array() && !archs->empty() && (*archs)[0].is_string())
    return (*archs)[0].get<std::string>();
  return "unknown";
}

std::string ignored_parts_note(const nlohmann::json& config) {
  const auto vision = config.find("vision_config");
  if (vision == config.end() || vision->is_null()) return "";
  return "text model only; the vision tower is not loaded";
}

WeightsStatus find_weights(const fs::path& folder) {
  if (is_file(folder / "model.safetensors") || is_file(folder / "model.safetensors.index.json"))
    return WeightsStatus::safetensors;
  if (is_file(folder / "pytorch_model.bin") || is_file(folder / "pytorch_model.bin.index.json"))
    return WeightsStatus::pytorch_only;
  return WeightsStatus::missing;
}

FolderInspection inspect_model_folder(const fs::path& folder) {
  nlohmann::json config;
  try {
    config = read_model_config(folder);
  } catch (const ModelError& e) {
    return {"unsupported",
            path_present(folder / "config.json") ? quote_excerpt(e.what(), 200) : "no config.json"};
  }
  const std::string family = model_family(config);
  if (family.empty())
    return {"unsupported", "model type " + model_type_name(config) + " is not supported yet"};
  switch (find_weights(folder)) {
    case WeightsStatus::safetensors:
      return {family, ignored_parts_note(config)};
    case WeightsStatus::pytorch_only:
      return {family, "only pytorch_model.bin: convert to safetensors (opening it shows how)"};
    case WeightsStatus::missing:
      break;
  }
  if (path_present(folder / "model.safetensors"))  // a symlink loop, a dangling link, a FIFO
    return {family, "model.safetensors " + regular_file_problem(folder / "model.safetensors")};
  return {family, "no model.safetensors"};
}

}  // namespace attnscope

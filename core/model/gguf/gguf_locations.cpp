// Where GGUF models live: a path, a folder holding one .gguf, Ollama's store (manifests naming
// content-addressed blobs) and LM Studio's model folders; and the listing of all of them for
// `attnscope models`, read from each file's header only.
//
// Ollama (server/images.go, types/model/name.go): a name is [host/][namespace/]model[:tag] with
// host registry.ollama.ai, namespace library and tag latest by default; its manifest is the JSON
// file $OLLAMA_MODELS/manifests/<host>/<namespace>/<model>/<tag> (default ~/.ollama/models), whose
// layer of mediaType application/vnd.ollama.image.model names the weights by digest
// "sha256:<64 hex>", stored as blobs/sha256-<hex>.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "core/model/gguf/gguf_file.h"
#include "core/model/gguf/gguf_model.h"
#include "core/util/error.h"
#include "core/util/file_read.h"
#include "core/util/json_file.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOllamaRegistry = "registry.ollama.ai";
constexpr const char* kOllamaNamespace = "library";
constexpr const char* kOllamaModelLayer = "application/vnd.ollama.image.model";
// Manifests are a few hundred bytes; anything near this is not one.
constexpr std::uint64_t kMaxManifestBytes = 1u << 20;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool ends_with_gguf(const fs::path& p) {
  const std::string name = lower(p.filename().string());
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0;
}
bool is_regular(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}
bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool starts_with_gguf_magic(const fs::path& p) {
  if (!is_regular(p)) return false;
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return false;
  char magic[4] = {};
  const bool ok = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  std::fclose(f);
  return ok;
}
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
fs::path home() {
  return fs::path(env("HOME"));
}

// A multimodal projector (LM Studio keeps mmproj-*.gguf beside the model): not a language model.
bool is_projector(const fs::path& p) {
  if (lower(p.filename().string()).rfind("mmproj", 0) == 0) return true;
  try {
    return GgufFile::open(p)->get_string("general.type", "") == "mmproj";
  } catch (const Error&) {
    return false;  // a broken file is a candidate; opening it says what is wrong
  }
}

// The .gguf files directly inside `dir` that are models (projectors left out), sorted by name.
std::vector<fs::path> model_ggufs_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if (ends_with_gguf(p) && is_regular(p) && !is_projector(p)) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string names_of(const std::vector<fs::path>& files) {
  std::string s;
  for (std::size_t i = 0; i < files.size() && i < 8; ++i)
    s += (i ? ", " : "") + files[i].filename().string();
  if (files.size() > 8) s += ", …";
  return s;
}

// ---- Ollama -------------------------------------------------------------------------------------

fs::path ollama_root() {
  const std::string dir = env("OLLAMA_MODELS");
  return dir.empty() ? home() / ".ollama" / "models" : fs::path(dir);
}

struct OllamaName {
  std::string host = kOllamaRegistry, space = kOllamaNamespace, model, tag = "latest";
  // How `attnscope models` writes it: the short form Ollama's own `ollama list` shows.
  std::string display() const {
    std::string s;
    if (host != kOllamaRegistry)
      s = host + "/" + space + "/";
    else if (space != kOllamaNamespace)
      s = space + "/";
    return s + model + ":" + tag;
  }
};

bool ollama_part_ok(const std::string& s) {
  if (s.empty() || s.size() > 350 || s == "." || s == "..") return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

// "model[:tag]", "ns/model[:tag]", "host/ns/model[:tag]"; nullopt if `spec` cannot be one.
std::optional<OllamaName> parse_ollama_name(const std::string& spec) {
  OllamaName n;
  std::string rest = spec;
  const std::size_t slash = rest.rfind('/');
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    n.tag = rest.substr(colon + 1);
    rest.resize(colon);
  }
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = rest.find('/', start);
    parts.push_back(rest.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  n.model = parts.back();
  if (parts.size() >= 2) n.space = parts[parts.size() - 2];
  if (parts.size() == 3) n.host = parts[0];
  for (const std::string* s : {&n.host, &n.space, &n.model, &n.tag})
    if (!ollama_part_ok(*s)) return std::nullopt;
  return n;
}

// `dir`/`name`, or the one entry of `dir` equal to it ignoring case (Ollama treats names so).
std::optional<fs::path> entry_ignoring_case(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  if (fs::exists(dir / name, ec)) return dir / name;
  const std::string want = lower(name);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (lower(it->path().filename().string()) == want) return it->path();
  return std::nullopt;
}

std::optional<fs::path> ollama_manifest(const OllamaName& n) {
  fs::path p = ollama_root() / "manifests";
  for (const std::string* part : {&n.host, &n.space, &n.model, &n.tag}) {
    const auto next = entry_ignoring_case(p, *part);
    if (!next) return std::nullopt;
    p = *next;
  }
  return is_regular(p) ? std::optional<fs::path>(p) : std::nullopt;
}

// The model blob a manifest names, checked: digest format, the blob present, its size as listed.
fs::path ollama_blob(const fs::path& manifest, const std::string& name) {
  const std::string what = "Ollama manifest " + manifest.string() + " (" + name + ")";
  const nlohmann::json m = load_json_file(manifest, "Ollama manifest", kMaxManifestBytes);
  if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array())
    throw ModelError(what + " has no \"layers\" list");
  for (const auto& layer : m["layers"]) {
    if (!layer.is_object() || layer.value("mediaType", nlohmann::json()) != kOllamaModelLayer)
      continue;
    const auto digest = layer.value("digest", nlohmann::json());
    const std::string d = digest.is_string() ? digest.get<std::string>() : "";
    const bool hex = d.size() == 71 && d.rfind("sha256:", 0) == 0 &&
                     std::all_of(d.begin() + 7, d.end(), [](char c) {
                       return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex)
      throw ModelError(what + ": the model layer's digest '" + quote_excerpt(d, 80) +
                       "' is not sha256:<64 hex digits>");
    const fs::path blob = ollama_root() / "blobs" / ("sha256-" + d.substr(7));
    if (const std::string problem = regular_file_problem(blob); !problem.empty())
      throw ModelError(what + ": its model blob " + blob.string() + " " + problem +
                       " (an interrupted pull? run: ollama pull " + name + ")");
    if (layer.contains("size")) {
      const auto& size = layer["size"];
      std::error_code ec;
      const std::uint64_t have = fs::file_size(blob, ec);
      if (!size.is_number_unsigned() || ec || have != size.get<std::uint64_t>())
        throw ModelError(what + ": its model blob " + blob.string() + " is " +
                         std::to_string(have) + " bytes, the manifest says " + size.dump() +
                         " (an interrupted pull? run: ollama pull " + name + ")");
    }
    return blob;
  }
  throw ModelError(what + " has no model layer (" + kOllamaModelLayer + ")");
}

// ---- LM Studio ----------------------------------------------------------------------------------

std::vector<fs::path> lm_studio_roots() {
  return {home() / ".lmstudio" / "models", home() / ".cache" / "lm-studio" / "models"};
}

std::optional<fs::path> resolve_lm_studio(const std::string& spec) {
  // "publisher/repo" or "publisher/repo/file.gguf", relative to one of the roots.
  const fs::path rel(spec);
  if (rel.is_absolute()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& part : rel) parts.push_back(part.string());
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  for (const auto& part : parts)
    if (part.empty() || part == "." || part == "..") return std::nullopt;
  for (const fs::path& root : lm_studio_roots()) {
    const fs::path p = root / rel;
    if (parts.size() == 3) {
      if (ends_with_gguf(p) && is_regular(p)) return p;
      continue;
    }
    if (!is_dir(p)) continue;
    const auto files = model_ggufs_in(p);
    if (files.size() == 1) return files[0];
    if (files.size() > 1)
      throw UsageError("LM Studio model " + spec + " has " + std::to_string(files.size()) +
                       " GGUF files (" + names_of(files) + "): pick one, e.g. --model " + spec +
                       "/" + files[0].filename().string());
  }
  return std::nullopt;
}

// ---- listing ------------------------------------------------------------------------------------

std::string kind_of_architecture(const std::string& arch) {
  static const std::map<std::string, std::string> kinds = {
      {"llama", "llama"},        {"qwen2", "qwen2"}, {"qwen3", "qwen3"}, {"gemma2", "gemma2"},
      {"gemma3", "gemma3_text"}, {"phi3", "phi3"},   {"gpt2", "gpt2"}};
  const auto it = kinds.find(arch);
  return it == kinds.end() ? "" : it->second;
}

std::string format_params(std::uint64_t n) {
  char buf[48];
  if (n >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.1f B params", n / 1e9);
  else if (n >= 100000000ull)
    std::snprintf(buf, sizeof buf, "%.0f M params", n / 1e6);
  else if (n >= 1000000ull)
    std::snprintf(buf, sizeof buf, "%.1f M params", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%llu params", static_cast<unsigned long long>(n));
  return buf;
}

std::string format_size(std::uint64_t bytes) {
  char buf[48];
  if (bytes >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  else if (bytes >= 100000000ull)
    std::snprintf(buf, sizeof buf, "%.0f MB", bytes / 1e6);
  else if (bytes >= 1000000ull)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  return buf;
}

// "Q4_K_M" from general.file_type, else the tensor type holding most of the bytes ("Q8_0").
std::string quantisation(const GgufFile& f) {
  std::string name;
  try {
    if (f.find("general.file_type")) name = llama_file_type_name(f.get_int("general.file_type"));
  } catch (const ModelError&) {
  }
  if (!name.empty()) return name;
  std::map<std::uint32_t, std::uint64_t> bytes;
  for (const GgufTensor& t : f.tensors()) bytes[t.ggml_type] += t.bytes;
  std::uint32_t best = 0;
  std::uint64_t most = 0;
  for (const auto& [type, n] : bytes)
    if (n > most) most = n, best = type;
  return most ? ggml_type_name(best) : "no tensors";
}

ModelListing describe(const std::string& spec, const fs::path& file) {
  ModelListing m;
  m.spec = spec;
  m.where = file.string();
  try {
    const auto f = GgufFile::open(file);
    const std::string arch = f->get_string("general.architecture", "");
    std::uint64_t params = 0;
    for (const GgufTensor& t : f->tensors()) params += t.elements();
    const std::string kind = kind_of_architecture(arch);
    m.kind = kind.empty() ? "unsupported" : kind;
    m.note = (arch.empty() ? std::string("no general.architecture") : quote_excerpt(arch, 40)) +
             (kind.empty() ? " (an architecture attnscope does not open)" : "") + " · " +
             format_params(params) + " · " + quantisation(*f) + " · " + format_size(f->file_size());
  } catch (const Error& e) {
    m.kind = "unsupported";
    m.note = e.what();
  }
  return m;
}

void list_ollama(std::vector<ModelListing>& out) {
  const fs::path manifests = ollama_root() / "manifests";
  std::error_code ec;
  if (!is_dir(manifests)) return;
  // manifests/<host>/<namespace>/<model>/<tag>: exactly four levels.
  for (fs::recursive_directory_iterator it(manifests, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it.depth() != 3 || !is_regular(it->path())) continue;
    const fs::path rel = fs::relative(it->path(), manifests, ec);
    std::vector<std::string> parts;
    for (const auto& p : rel) parts.push_back(p.string());
    if (parts.size() != 4) continue;
    OllamaName n;
    n.host = parts[0], n.space = parts[1], n.model = parts[2], n.tag = parts[3];
    const std::string spec = n.display();
    try {
      out.push_back(describe(spec, ollama_blob(it->path(), spec)));
    } catch (const Error& e) {
      out.push_back({spec, "unsupported", it->path().string(), e.what(), ""});
    }
  }
}

void list_lm_studio(std::vector<ModelListing>& out) {
  for (const fs::path& root : lm_studio_roots()) {
    if (!is_dir(root)) continue;
    std::vector<fs::path> repos;
    std::error_code ec;
    for (fs::directory_iterator pub(root, ec), end; !ec && pub != end; pub.increment(ec)) {
      if (!is_dir(pub->path())) continue;
      std::error_code ec2;
      for (fs::directory_iterator repo(pub->path(), ec2), end2; !ec2 && repo != end2;
           repo.increment(ec2))
        if (is_dir(repo->path())) repos.push_back(repo->path());
    }
    std::sort(repos.begin(), repos.end());
    for (const fs::path& repo : repos) {
      const auto files = model_ggufs_in(repo);
      const std::string base =
          repo.parent_path().filename().string() + "/" + repo.filename().string();
      for (const fs::path& f : files)
        out.push_back(describe(files.size() == 1 ? base : base + "/" + f.filename().string(), f));
    }
  }
}

}  // namespace

std::optional<fs::path> resolve_gguf_spec(const std::string& spec) {
  if (spec.empty()) return std::nullopt;
  const fs::path path(spec);
  if (is_regular(path)) {
    if (ends_with_gguf(path) || starts_with_gguf_magic(path)) return path;
    return std::nullopt;
  }
  if (is_dir(path)) {
    // A Hugging Face folder that also holds a .gguf stays a Hugging Face model.
    std::error_code ec;
    bool hf = is_regular(path / "config.json");
    if (hf) {
      hf = false;
      for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".safetensors") hf = true;
    }
    if (hf) return std::nullopt;
    const auto files = model_ggufs_in(path);
    if (files.size() == 1) return files[0];
    if (files.size() > 1)
      throw UsageError(path.string() + " holds " + std::to_string(files.size()) + " GGUF files (" +
                       names_of(files) + "): pick one, e.g. --model " +
                       (path / files[0].filename()).string());
    return std::nullopt;
  }
  if (const auto name = parse_ollama_name(spec)) {
    if (const auto manifest = ollama_manifest(*name)) return ollama_blob(*manifest, spec);
  }
  if (const auto lm = resolve_lm_studio(spec)) return lm;
  // A path to a .gguf that is not there: opening it says so, rather than Hugging Face's search.
  if (ends_with_gguf(path)) return path;
  return std::nullopt;
}

std::vector<ModelListing> list_gguf_models() {
  std::vector<ModelListing> out;
  list_ollama(out);
  list_lm_studio(out);
  return out;
}

}  // namespace attnscope

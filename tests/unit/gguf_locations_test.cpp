// Where GGUF models are found: paths, folders holding one .gguf (projectors skipped), an Ollama
// store made here (manifests + blobs under $OLLAMA_MODELS or ~/.ollama/models, as `ollama pull`
// leaves them) and LM Studio folders (~/.lmstudio/models, ~/.cache/lm-studio/models); and the
// listing `attnscope models` shows, read from each file's header.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/model/gguf/gguf_file.h"
#include "core/model/gguf/gguf_model.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "tests/common/gguf_bytes.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::GgufBytes;

// A fresh HOME and OLLAMA_MODELS per test, so nothing of the machine's own stores is seen.
class GgufLocations : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gguf_locations_test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "home");
    ::setenv("HOME", (root_ / "home").c_str(), 1);
    ::unsetenv("OLLAMA_MODELS");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A tiny model file of `arch` (its bytes, so a test can also put them in a blob).
  static std::string model_bytes(const std::string& arch, std::optional<int> file_type = 15,
                                 const std::string& general_type = "") {
    GgufBytes b;
    b.str("general.architecture", arch);
    if (file_type) b.u32("general.file_type", static_cast<std::uint32_t>(*file_type));
    if (!general_type.empty()) b.str("general.type", general_type);
    b.tensor("token_embd.weight", {256, 4}, 12).tensor("output_norm.weight", {256}, 0);
    return b.bytes();
  }
  static fs::path write(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    GgufBytes::write_bytes(p, bytes);
    return p;
  }
  static std::string usage_error(const std::string& spec) {
    try {
      (void)resolve_gguf_spec(spec);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no usage error)";
  }
  static std::string model_error(const std::string& spec) {
    try {
      (void)resolve_gguf_spec(spec);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(no model error)";
  }

  // An Ollama store: the blob named by its sha256, the manifest as Ollama writes it.
  fs::path ollama_pull(const fs::path& store, const std::string& host, const std::string& ns,
                       const std::string& model, const std::string& tag, const std::string& bytes,
                       const std::string& digest_override = "",
                       std::optional<std::uint64_t> size_override = std::nullopt) {
    const std::string hex = sha256_hex(bytes);
    const fs::path blob = write(store / "blobs" / ("sha256-" + hex), bytes);
    const std::string digest = digest_override.empty() ? "sha256:" + hex : digest_override;
    const std::string manifest =
        R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"
        R"("config":{"mediaType":"application/vnd.docker.container.image.v1+json",)"
        R"("digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":2},)"
        R"("layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:)" +
        std::string(64, '1') + R"(","size":5},)" +
        R"({"mediaType":"application/vnd.ollama.image.model","digest":")" + digest +
        R"(","size":)" + std::to_string(size_override ? *size_override : bytes.size()) + "}]}";
    write(store / "manifests" / host / ns / model / tag, manifest);
    return blob;
  }

  fs::path root_;
};

TEST_F(GgufLocations, PathsToFiles) {
  const fs::path a = write(root_ / "a.gguf", model_bytes("llama"));
  EXPECT_EQ(resolve_gguf_spec(a.string()), a);
  const fs::path upper = write(root_ / "B.GGUF", model_bytes("llama"));
  EXPECT_EQ(resolve_gguf_spec(upper.string()), upper);
  // Any name, when the file starts with the magic (Ollama's blobs have no extension).
  const fs::path blob = write(root_ / "sha256-abc", model_bytes("llama"));
  EXPECT_EQ(resolve_gguf_spec(blob.string()), blob);
  const fs::path other = write(root_ / "model.bin", "not gguf at all");
  EXPECT_EQ(resolve_gguf_spec(other.string()), std::nullopt);
  // A .gguf path that is not there is still a GGUF spec: opening it says it does not exist.
  EXPECT_EQ(resolve_gguf_spec((root_ / "missing.gguf").string()), root_ / "missing.gguf");
  EXPECT_EQ(resolve_gguf_spec("gpt2"), std::nullopt);
  EXPECT_EQ(resolve_gguf_spec(""), std::nullopt);
}

TEST_F(GgufLocations, FolderWithOneModel) {
  const fs::path dir = root_ / "Llama-3.2-1B-GGUF";
  const fs::path model = write(dir / "Llama-3.2-1B-Q4_K_M.gguf", model_bytes("llama"));
  write(dir / "README.md", "# a model card");
  EXPECT_EQ(resolve_gguf_spec(dir.string()), model);
  // Projectors are not models: by name, or by general.type.
  write(dir / "mmproj-model-f16.gguf", model_bytes("clip"));
  write(dir / "vision.gguf", model_bytes("clip", std::nullopt, "mmproj"));
  EXPECT_EQ(resolve_gguf_spec(dir.string()), model);
  // Two models: the choice is the user's.
  write(dir / "Llama-3.2-1B-Q8_0.gguf", model_bytes("llama", 7));
  const std::string e = usage_error(dir.string());
  EXPECT_NE(e.find("holds 2 GGUF files (Llama-3.2-1B-Q4_K_M.gguf, Llama-3.2-1B-Q8_0.gguf)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("pick one, e.g. --model " + (dir / "Llama-3.2-1B-Q4_K_M.gguf").string()),
            std::string::npos)
      << e;
  // Empty folder, and a Hugging Face folder that also holds a .gguf: not GGUF specs.
  fs::create_directories(root_ / "empty");
  EXPECT_EQ(resolve_gguf_spec((root_ / "empty").string()), std::nullopt);
  const fs::path hf = root_ / "hf";
  write(hf / "config.json", "{}");
  write(hf / "model.safetensors", "x");
  write(hf / "model.gguf", model_bytes("llama"));
  EXPECT_EQ(resolve_gguf_spec(hf.string()), std::nullopt);
}

TEST_F(GgufLocations, OllamaNamesUnderOllamaModels) {
  const fs::path store = root_ / "ollama";
  ::setenv("OLLAMA_MODELS", store.c_str(), 1);
  const std::string bytes = model_bytes("llama");
  const fs::path blob =
      ollama_pull(store, "registry.ollama.ai", "library", "tiny", "latest", bytes);
  const fs::path q8 =
      ollama_pull(store, "registry.ollama.ai", "library", "tiny", "q8", model_bytes("llama", 7));
  const fs::path mine =
      ollama_pull(store, "registry.ollama.ai", "someone", "other", "v1", model_bytes("qwen2", 1));
  const fs::path hf = ollama_pull(store, "hf.co", "bartowski", "Llama-3.2-1B-Instruct-GGUF",
                                  "Q4_K_M", model_bytes("llama", 15, "model"));
  EXPECT_EQ(blob, store / "blobs" / ("sha256-" + sha256_hex(bytes)));
  EXPECT_EQ(resolve_gguf_spec("tiny"), blob);
  EXPECT_EQ(resolve_gguf_spec("tiny:latest"), blob);
  EXPECT_EQ(resolve_gguf_spec("library/tiny:latest"), blob);
  EXPECT_EQ(resolve_gguf_spec("registry.ollama.ai/library/tiny"), blob);
  EXPECT_EQ(resolve_gguf_spec("TINY:Latest"), blob);  // Ollama's names ignore case
  EXPECT_EQ(resolve_gguf_spec("tiny:q8"), q8);
  EXPECT_EQ(resolve_gguf_spec("someone/other:v1"), mine);
  EXPECT_EQ(resolve_gguf_spec("hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"), hf);
  EXPECT_EQ(resolve_gguf_spec("tiny:q4"), std::nullopt);   // no such tag: not an Ollama model
  EXPECT_EQ(resolve_gguf_spec("other:v1"), std::nullopt);  // in namespace someone, not library
  EXPECT_EQ(resolve_gguf_spec("a/b/c/d"), std::nullopt);
  // The blob opens as the model it is.
  EXPECT_EQ(GgufFile::open(*resolve_gguf_spec("tiny"))->get_string("general.architecture"),
            "llama");
}

TEST_F(GgufLocations, OllamaStoreUnderHome) {
  const fs::path store = root_ / "home" / ".ollama" / "models";
  const fs::path blob =
      ollama_pull(store, "registry.ollama.ai", "library", "llama3.2", "1b", model_bytes("llama"));
  EXPECT_EQ(resolve_gguf_spec("llama3.2:1b"), blob);
  EXPECT_EQ(resolve_gguf_spec("llama3.2"), std::nullopt);  // :latest was never pulled
}

TEST_F(GgufLocations, BrokenOllamaStoresSayWhat) {
  const fs::path store = root_ / "ollama";
  ::setenv("OLLAMA_MODELS", store.c_str(), 1);
  const std::string bytes = model_bytes("llama");
  ollama_pull(store, "registry.ollama.ai", "library", "baddigest", "latest", bytes, "sha256:XYZ");
  std::string e = model_error("baddigest");
  EXPECT_NE(e.find("digest 'sha256:XYZ' is not sha256:<64 hex digits>"), std::string::npos) << e;
  ollama_pull(store, "registry.ollama.ai", "library", "short", "latest", bytes, "",
              bytes.size() + 1000);
  e = model_error("short");
  EXPECT_NE(e.find("is " + std::to_string(bytes.size()) + " bytes, the manifest says " +
                   std::to_string(bytes.size() + 1000)),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("ollama pull short"), std::string::npos) << e;
  const fs::path blob =
      ollama_pull(store, "registry.ollama.ai", "library", "gone", "latest", model_bytes("qwen3"));
  fs::remove(blob);
  e = model_error("gone");
  EXPECT_NE(e.find("its model blob " + blob.string() + " does not exist"), std::string::npos) << e;
  write(store / "manifests" / "registry.ollama.ai" / "library" / "nolayer" / "latest",
        R"({"schemaVersion":2,"layers":[]})");
  e = model_error("nolayer");
  EXPECT_NE(e.find("has no model layer (application/vnd.ollama.image.model)"), std::string::npos)
      << e;
  write(store / "manifests" / "registry.ollama.ai" / "library" / "notjson" / "latest", "{oops");
  e = model_error("notjson");
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST_F(GgufLocations, LmStudioFolders) {
  const fs::path lms = root_ / "home" / ".lmstudio" / "models";
  const fs::path model =
      write(lms / "lmstudio-community" / "gemma-3-1b-it-GGUF" / "gemma-3-1b-it-Q4_K_M.gguf",
            model_bytes("gemma3"));
  write(lms / "lmstudio-community" / "gemma-3-1b-it-GGUF" / "mmproj-model-f16.gguf",
        model_bytes("clip"));
  EXPECT_EQ(resolve_gguf_spec("lmstudio-community/gemma-3-1b-it-GGUF"), model);
  EXPECT_EQ(resolve_gguf_spec("lmstudio-community/gemma-3-1b-it-GGUF/gemma-3-1b-it-Q4_K_M.gguf"),
            model);
  const fs::path cache = root_ / "home" / ".cache" / "lm-studio" / "models";
  const fs::path a =
      write(cache / "bartowski" / "Qwen3-GGUF" / "Qwen3-Q4_K_M.gguf", model_bytes("qwen3"));
  write(cache / "bartowski" / "Qwen3-GGUF" / "Qwen3-Q8_0.gguf", model_bytes("qwen3", 7));
  EXPECT_EQ(resolve_gguf_spec("bartowski/Qwen3-GGUF/Qwen3-Q4_K_M.gguf"), a);
  const std::string e = usage_error("bartowski/Qwen3-GGUF");
  EXPECT_NE(e.find("LM Studio model bartowski/Qwen3-GGUF has 2 GGUF files (Qwen3-Q4_K_M.gguf, "
                   "Qwen3-Q8_0.gguf): pick one, e.g. --model "
                   "bartowski/Qwen3-GGUF/Qwen3-Q4_K_M.gguf"),
            std::string::npos)
      << e;
  EXPECT_EQ(resolve_gguf_spec("bartowski/absent"), std::nullopt);
  EXPECT_EQ(resolve_gguf_spec("lmstudio-community/../lmstudio-community/gemma-3-1b-it-GGUF"),
            std::nullopt);
}

TEST_F(GgufLocations, ListsEveryStoreWithArchitectureSizeAndQuantisation) {
  const fs::path store = root_ / "ollama";
  ::setenv("OLLAMA_MODELS", store.c_str(), 1);
  // 2,097,152 Q8_0 parameters: 2,228,224 bytes of blocks (34 bytes per 32) + the header.
  GgufBytes big;
  big.str("general.architecture", "llama").u32("general.file_type", 7);
  big.tensor("token_embd.weight", {2048, 1024}, 8);
  const std::string big_bytes = big.bytes();
  ASSERT_GT(big_bytes.size(), 2228224u);
  ASSERT_LT(big_bytes.size(), 2250000u);
  const fs::path blob =
      ollama_pull(store, "registry.ollama.ai", "library", "tiny", "latest", big_bytes);
  ollama_pull(store, "hf.co", "someone", "Gemma-GGUF", "Q4_K_M", model_bytes("gemma3"));
  ollama_pull(store, "registry.ollama.ai", "me", "mamba", "v1", model_bytes("mamba"));
  ollama_pull(store, "registry.ollama.ai", "library", "broken", "latest",
              "GGUF" + test::le<std::uint32_t>(1) + std::string(20, '\0'));
  ollama_pull(store, "registry.ollama.ai", "library", "gone", "latest", "xyz", "sha256:12");
  const fs::path lms = root_ / "home" / ".lmstudio" / "models";
  const fs::path one =
      write(lms / "pub" / "Phi-GGUF" / "phi.gguf", model_bytes("phi3", std::nullopt));
  write(lms / "pub" / "Phi-GGUF" / "mmproj-phi.gguf", model_bytes("clip"));
  const fs::path cache = root_ / "home" / ".cache" / "lm-studio" / "models";
  const fs::path q1 = write(cache / "pub2" / "Q" / "q-a.gguf", model_bytes("qwen2", 1));
  const fs::path q2 = write(cache / "pub2" / "Q" / "q-b.gguf", model_bytes("qwen2", 32));

  std::map<std::string, ModelListing> got;
  for (const ModelListing& m : list_gguf_models()) got[m.spec] = m;
  ASSERT_EQ(got.size(), 8u);
  ASSERT_TRUE(got.count("tiny:latest"));
  EXPECT_EQ(got["tiny:latest"].kind, "llama");
  EXPECT_EQ(got["tiny:latest"].where, blob.string());
  EXPECT_EQ(got["tiny:latest"].note, "llama · 2.1 M params · Q8_0 · 2.2 MB");
  ASSERT_TRUE(got.count("hf.co/someone/Gemma-GGUF:Q4_K_M"));
  EXPECT_EQ(got["hf.co/someone/Gemma-GGUF:Q4_K_M"].kind, "gemma3_text");
  // 1,280 parameters: 4 Q4_K rows of 256 + a norm of 256; 4 x 144 + 1,024 bytes + the header.
  const std::string gemma = got["hf.co/someone/Gemma-GGUF:Q4_K_M"].note;
  EXPECT_EQ(gemma.rfind("gemma3 · 1280 params · Q4_K_M · 1.", 0), 0u) << gemma;
  EXPECT_EQ(gemma.substr(gemma.size() - 3), " kB") << gemma;
  ASSERT_TRUE(got.count("me/mamba:v1"));
  EXPECT_EQ(got["me/mamba:v1"].kind, "unsupported");
  EXPECT_EQ(got["me/mamba:v1"].note.rfind("mamba (an architecture attnscope does not open) · ", 0),
            0u)
      << got["me/mamba:v1"].note;
  ASSERT_TRUE(got.count("broken:latest"));
  EXPECT_EQ(got["broken:latest"].kind, "unsupported");
  EXPECT_NE(got["broken:latest"].note.find("GGUF version 1 is not supported"), std::string::npos)
      << got["broken:latest"].note;
  ASSERT_TRUE(got.count("gone:latest"));
  EXPECT_EQ(got["gone:latest"].kind, "unsupported");
  EXPECT_NE(got["gone:latest"].note.find("is not sha256:<64 hex digits>"), std::string::npos);
  ASSERT_TRUE(got.count("pub/Phi-GGUF"));
  EXPECT_EQ(got["pub/Phi-GGUF"].kind, "phi3");
  EXPECT_EQ(got["pub/Phi-GGUF"].where, one.string());
  // No general.file_type: the type holding most bytes (1,024 of F32 against 576 of Q4_K).
  EXPECT_EQ(got["pub/Phi-GGUF"].note.rfind("phi3 · 1280 params · F32 · ", 0), 0u)
      << got["pub/Phi-GGUF"].note;
  ASSERT_TRUE(got.count("pub2/Q/q-a.gguf"));
  ASSERT_TRUE(got.count("pub2/Q/q-b.gguf"));
  EXPECT_EQ(got["pub2/Q/q-a.gguf"].kind, "qwen2");
  EXPECT_EQ(got["pub2/Q/q-a.gguf"].where, q1.string());
  EXPECT_NE(got["pub2/Q/q-a.gguf"].note.find(" · F16 · "), std::string::npos);
  EXPECT_NE(got["pub2/Q/q-b.gguf"].note.find(" · BF16 · "), std::string::npos);
  // Every listed spec resolves to the file listed (the broken stores throw, saying why).
  for (const auto& [spec, m] : got) {
    if (spec != "broken:latest" && spec != "gone:latest") {
      EXPECT_EQ(resolve_gguf_spec(spec), fs::path(m.where)) << spec;
    }
  }
  EXPECT_EQ(
      resolve_gguf_spec("broken"),
      store / "blobs" /
          ("sha256-" + sha256_hex("GGUF" + test::le<std::uint32_t>(1) + std::string(20, '\0'))));
}

TEST_F(GgufLocations, NothingToListWithoutStores) {
  EXPECT_TRUE(list_gguf_models().empty());
}

}  // namespace
}  // namespace attnscope

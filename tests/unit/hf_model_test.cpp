// open_hf_model(): config.json checks and dispatch to the family loaders; list_hf_models().
// The loaders themselves belong to other tests: here they are only reached (seen through the
// progress messages) and fail on the fake weights, or are not built yet in this branch.
#include "core/model/hf/hf_model.h"

#include <gtest/gtest.h>

#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/error.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::ScopedCwd;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;

class HfModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_hf_env(env, tmp.path() / "home");
    cache = tmp.path() / "hub";
    env.set("HF_HUB_CACHE", cache.string());
    fs::create_directories(tmp.path() / "work");
  }

  // A model folder with this config.json and, unless told otherwise, a (fake) model.safetensors.
  fs::path make_folder(const std::string& name, const std::string& config,
                       const std::string& weights = "model.safetensors") {
    fs::path folder = tmp.path() / name;
    if (!config.empty()) write_file(folder / "config.json", config);
    if (!weights.empty()) write_file(folder / weights, "not really tensors");
    fs::create_directories(folder);
    return folder;
  }

  // The ModelError message of opening `folder`, and the progress messages seen on the way.
  std::string open_error(const fs::path& folder, std::vector<std::string>* steps = nullptr) {
    try {
      open_hf_model(folder.string(), [&](double fraction, const std::string& what) {
        EXPECT_GE(fraction, 0.0);
        EXPECT_LE(fraction, 1.0);
        if (steps) steps->push_back(what);
      });
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(no ModelError)";
  }

  static bool reached_loader(const std::vector<std::string>& steps, const std::string& family) {
    for (const std::string& s : steps)
      if (s.rfind("loading " + family + " model from ", 0) == 0) return true;
    return false;
  }

  TempDir tmp;
  ScopedEnv env;
  fs::path cache;
};

TEST_F(HfModelTest, MissingConfigNamesTheFile) {
  fs::path folder = make_folder("empty", "");
  std::string msg = open_error(folder);
  EXPECT_NE(msg.find((folder / "config.json").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;
}

TEST_F(HfModelTest, InvalidConfigNamesTheFile) {
  fs::path folder = make_folder("broken", "{\"model_type\": ");
  std::string msg = open_error(folder);
  EXPECT_NE(msg.find((folder / "config.json").string() + " is not valid JSON"), std::string::npos)
      << msg;
  EXPECT_NE(open_error(make_folder("array", "[1, 2]")).find("not a JSON object"),
            std::string::npos);
}

TEST_F(HfModelTest, UnsupportedTypeIsNamed) {
  std::vector<std::string> steps;
  std::string msg = open_error(make_folder("mamba", R"({"model_type": "mamba"})"), &steps);
  // Every family of the registry, named as config.json's model_type says it.
  for (const char* family : {"gpt2", "bert", "roberta", "xlm-roberta", "distilbert", "llama",
                             "mistral", "qwen2", "gemma3_text"})
    EXPECT_NE(hf_family_names().find(family), std::string::npos) << family;
  EXPECT_NE(
      msg.find("model type mamba is not supported yet (attnscope opens " + hf_family_names() + ")"),
      std::string::npos)
      << msg;
  EXPECT_FALSE(reached_loader(steps, "gpt2") || reached_loader(steps, "bert"));
}

TEST_F(HfModelTest, PytorchOnlyFolderExplainsTheConversion) {
  fs::path folder = make_folder("pt", R"({"model_type": "bert"})", "pytorch_model.bin");
  std::vector<std::string> steps;
  std::string msg = open_error(folder, &steps);
  EXPECT_NE(msg.find("only pytorch_model.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("AutoModel.from_pretrained('" + folder.string() + "').save_pretrained('" +
                     folder.string() + "', safe_serialization=True)"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(reached_loader(steps, "bert"));
}

TEST_F(HfModelTest, FolderWithoutWeightsSaysSo) {
  std::string msg = open_error(make_folder("now", R"({"model_type": "gpt2"})", ""));
  EXPECT_NE(msg.find("has no model.safetensors"), std::string::npos) << msg;
}

TEST_F(HfModelTest, DispatchesGpt2AndBertToTheirLoaders) {
  std::vector<std::string> steps;
  fs::path gpt2 = make_folder("gpt2", R"({"model_type": "gpt2", "n_layer": 1})");
  open_error(gpt2, &steps);
  EXPECT_TRUE(reached_loader(steps, "gpt2"));
  EXPECT_FALSE(reached_loader(steps, "bert"));

  steps.clear();
  open_error(make_folder("bert", R"({"model_type": "bert"})"), &steps);
  EXPECT_TRUE(reached_loader(steps, "bert"));
  EXPECT_FALSE(reached_loader(steps, "gpt2"));

  // The encoders after BERT, each by its own model_type (issue 24).
  for (const char* type : {"roberta", "xlm-roberta", "distilbert"}) {
    steps.clear();
    open_error(make_folder(type, std::string(R"({"model_type": ")") + type + "\"}"), &steps);
    EXPECT_TRUE(reached_loader(steps, type)) << type;
    EXPECT_FALSE(reached_loader(steps, "bert")) << type;
  }

  // No model_type: the architecture names the family.
  steps.clear();
  open_error(make_folder("old", R"({"architectures": ["GPT2LMHeadModel"]})"), &steps);
  EXPECT_TRUE(reached_loader(steps, "gpt2"));
  // A sharded checkpoint is found as weights and reaches the loader.
  steps.clear();
  open_error(make_folder("sharded", R"({"model_type": "gpt2"})", "model.safetensors.index.json"),
             &steps);
  EXPECT_TRUE(reached_loader(steps, "gpt2"));
}

TEST_F(HfModelTest, HubSnapshotsWithSymlinksIntoBlobsAreFollowed) {
  // huggingface_hub stores files in blobs/ and links them from snapshots/<rev>/.
  fs::path repo = cache / "models--org--linked";
  write_file(repo / "blobs" / "c1", R"({"model_type": "bert"})");
  write_file(repo / "blobs" / "w1", "weights");
  fs::create_directories(repo / "snapshots" / "r1");
  fs::create_symlink("../../blobs/c1", repo / "snapshots" / "r1" / "config.json");
  fs::create_symlink("../../blobs/w1", repo / "snapshots" / "r1" / "model.safetensors");
  write_file(repo / "refs" / "main", "r1");
  ScopedCwd cwd(tmp.path() / "work");
  std::vector<std::string> steps;
  try {
    open_hf_model("linked", [&](double, const std::string& what) { steps.push_back(what); });
  } catch (const ModelError&) {
  }
  EXPECT_TRUE(reached_loader(steps, "bert"));
  std::vector<ModelListing> all = list_hf_models();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].kind, "bert");
  EXPECT_EQ(all[0].note, "");
}

TEST_F(HfModelTest, UnknownSpecIsAUsageError) {
  ScopedCwd cwd(tmp.path() / "work");
  EXPECT_THROW(open_hf_model("nobody/nothing", {}), UsageError);
}

TEST_F(HfModelTest, ListsEveryFolderWithKindNoteAndAWorkingSpec) {
  ScopedCwd cwd(tmp.path() / "work");
  auto snapshot = [&](const std::string& id, const std::string& config,
                      const std::string& weights) {
    fs::path snap = cache / repo_folder_name(id) / "snapshots" / "r1";
    write_file(snap / "config.json", config);
    write_file(snap / weights, "x");
    return snap;
  };
  fs::path gpt2 =
      snapshot("openai-community/gpt2", R"({"model_type": "gpt2"})", "model.safetensors");
  fs::path bert =
      snapshot("google-bert/bert-base-uncased", R"({"model_type": "bert"})", "pytorch_model.bin");
  // An unsupported family (t5 opens since issue 24's encoder–decoders).
  fs::path whisper =
      snapshot("openai/whisper-tiny", R"({"model_type": "whisper"})", "model.safetensors");
  fs::create_directories(cache / "models--org--partial");
  write_file(tmp.path() / "work" / "models" / "mine" / "config.json", R"({"model_type": "bert"})");
  write_file(tmp.path() / "work" / "models" / "mine" / "model.safetensors", "x");

  std::vector<ModelListing> all = list_hf_models();
  ASSERT_EQ(all.size(), 5u);
  std::map<std::string, ModelListing> by_spec;
  for (const ModelListing& m : all) by_spec[m.spec] = m;

  ASSERT_TRUE(by_spec.count("mine"));
  EXPECT_EQ(by_spec["mine"].kind, "bert");
  EXPECT_EQ(by_spec["mine"].note, "");
  ASSERT_TRUE(by_spec.count("openai-community/gpt2"));
  EXPECT_EQ(by_spec["openai-community/gpt2"].kind, "gpt2");
  EXPECT_EQ(by_spec["openai-community/gpt2"].where, gpt2.string());
  ASSERT_TRUE(by_spec.count("google-bert/bert-base-uncased"));
  EXPECT_EQ(by_spec["google-bert/bert-base-uncased"].kind, "bert");
  EXPECT_NE(by_spec["google-bert/bert-base-uncased"].note.find("pytorch_model.bin"),
            std::string::npos);
  ASSERT_TRUE(by_spec.count("openai/whisper-tiny"));
  EXPECT_EQ(by_spec["openai/whisper-tiny"].kind, "unsupported");
  EXPECT_NE(by_spec["openai/whisper-tiny"].note.find("whisper"), std::string::npos);
  ASSERT_TRUE(by_spec.count("org/partial"));
  EXPECT_EQ(by_spec["org/partial"].kind, "unsupported");
  EXPECT_NE(by_spec["org/partial"].note.find("attnscope download org/partial"), std::string::npos);

  // Every listed spec of a complete folder resolves back to the folder listed.
  for (const ModelListing& m : all) {
    if (m.spec == "org/partial") continue;
    EXPECT_TRUE(fs::equivalent(resolve_model_spec(m.spec), m.where)) << m.spec;
  }
}

TEST_F(HfModelTest, ShadowedRepoIsListedByPath) {
  // ./models/gpt2 takes the name "gpt2", so the cached models--gpt2 must be listed by its path.
  ScopedCwd cwd(tmp.path() / "work");
  write_file(tmp.path() / "work" / "models" / "gpt2" / "config.json", R"({"model_type": "gpt2"})");
  fs::path snap = cache / "models--gpt2" / "snapshots" / "r1";
  write_file(snap / "config.json", R"({"model_type": "gpt2"})");
  std::vector<ModelListing> all = list_hf_models();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].spec, "gpt2");
  EXPECT_EQ(all[1].spec, snap.string());
  EXPECT_EQ(all[1].note, "no model.safetensors");
}

}  // namespace
}  // namespace attnscope

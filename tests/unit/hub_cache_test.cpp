// Model spec resolution (core/model/hf/hub_cache.h) over fake cache trees in a temp dir.
#include "core/model/hf/hub_cache.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/util/error.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::ScopedCwd;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;

// Makes CACHE/models--ID/snapshots/REV/config.json; returns the snapshot folder.
fs::path make_snapshot(const fs::path& cache, const std::string& repo_id, const std::string& rev) {
  fs::path snap = cache / repo_folder_name(repo_id) / "snapshots" / rev;
  write_file(snap / "config.json", R"({"model_type": "gpt2"})");
  return snap;
}

void set_ref(const fs::path& cache, const std::string& repo_id, const std::string& rev) {
  write_file(cache / repo_folder_name(repo_id) / "refs" / "main", rev + "\n");
}

std::string usage_error_of(const std::string& spec) {
  try {
    resolve_model_spec(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

class HubCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home = tmp.path() / "home";
    fs::create_directories(home);
    testing::isolate_hf_env(env, home);
    cache = tmp.path() / "hub";
    env.set("HF_HUB_CACHE", cache.string());
    fs::create_directories(tmp.path() / "work");
  }
  TempDir tmp;
  ScopedEnv env;
  fs::path home, cache;
};

TEST_F(HubCacheTest, CacheFolderFollowsTheEnvironmentInHuggingFaceOrder) {
  env.set("HF_HUB_CACHE", std::nullopt);
  EXPECT_EQ(default_hub_cache(), home / ".cache" / "huggingface" / "hub");
  env.set("XDG_CACHE_HOME", "/x/cache");
  EXPECT_EQ(default_hub_cache(), fs::path("/x/cache/huggingface/hub"));
  env.set("HF_HOME", "~/hf");
  EXPECT_EQ(default_hub_cache(), home / "hf" / "hub");
  env.set("HF_HUB_CACHE", "/y/hub");
  EXPECT_EQ(default_hub_cache(), fs::path("/y/hub"));
}

TEST_F(HubCacheTest, RepoFolderNamesRoundTrip) {
  EXPECT_EQ(repo_folder_name("openai-community/gpt2"), "models--openai-community--gpt2");
  EXPECT_EQ(repo_folder_name("gpt2"), "models--gpt2");
  EXPECT_EQ(repo_id_from_folder_name("models--openai-community--gpt2"), "openai-community/gpt2");
  EXPECT_EQ(repo_id_from_folder_name("models--gpt2"), "gpt2");
  EXPECT_EQ(repo_id_from_folder_name("datasets--x--y"), std::nullopt);
  EXPECT_EQ(repo_id_from_folder_name("models--"), std::nullopt);
}

TEST_F(HubCacheTest, ExpandsTilde) {
  EXPECT_EQ(expand_user("~"), home);
  EXPECT_EQ(expand_user("~/models/x"), home / "models" / "x");
  EXPECT_EQ(expand_user("/abs/~/x"), fs::path("/abs/~/x"));
}

TEST_F(HubCacheTest, OrgSlashNameFindsTheRepoFolder) {
  fs::path snap = make_snapshot(cache, "openai-community/gpt2", "aaa");
  EXPECT_EQ(resolve_model_spec("openai-community/gpt2"), snap);
}

TEST_F(HubCacheTest, RefsMainWinsOverNewerSnapshots) {
  fs::path a = make_snapshot(cache, "org/m", "aaa");
  fs::path b = make_snapshot(cache, "org/m", "bbb");
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(a, now - std::chrono::hours(2));
  fs::last_write_time(b, now - std::chrono::hours(1));
  EXPECT_EQ(resolve_model_spec("org/m"), b);  // no ref: the newest
  set_ref(cache, "org/m", "aaa");
  EXPECT_EQ(resolve_model_spec("org/m"), a);
  set_ref(cache, "org/m", "gone");  // a ref to a missing snapshot: back to the newest
  EXPECT_EQ(resolve_model_spec("org/m"), b);
}

TEST_F(HubCacheTest, SnapshotWithConfigPreferredOverNewerIncompleteOne) {
  fs::path done = make_snapshot(cache, "org/m", "done");
  fs::path partial = cache / "models--org--m" / "snapshots" / "partial";
  write_file(partial / "model.safetensors.incomplete", "xx");
  fs::last_write_time(done, fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(resolve_model_spec("org/m"), done);
}

TEST_F(HubCacheTest, BareNameMatchesTheRenamedRepoWhenUnique) {
  fs::path gpt2 = make_snapshot(cache, "openai-community/gpt2", "r1");
  fs::path bert = make_snapshot(cache, "google-bert/bert-base-uncased", "r2");
  make_snapshot(cache, "distilbert/distilgpt2", "r3");  // a different NAME: no match for gpt2
  EXPECT_EQ(resolve_model_spec("gpt2"), gpt2);
  EXPECT_EQ(resolve_model_spec("bert-base-uncased"), bert);
}

TEST_F(HubCacheTest, BareNamePrefersTheExactLegacyFolder) {
  fs::path legacy = make_snapshot(cache, "gpt2", "r1");
  make_snapshot(cache, "openai-community/gpt2", "r2");
  EXPECT_EQ(resolve_model_spec("gpt2"), legacy);
}

TEST_F(HubCacheTest, AmbiguousBareNameListsTheCandidates) {
  make_snapshot(cache, "alice/tiny", "r1");
  make_snapshot(cache, "bob/tiny", "r2");
  const std::string msg = usage_error_of("tiny");
  EXPECT_NE(msg.find("alice/tiny"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bob/tiny"), std::string::npos) << msg;
  EXPECT_EQ(resolve_model_spec("bob/tiny"), cache / "models--bob--tiny" / "snapshots" / "r2");
}

TEST_F(HubCacheTest, UnknownSpecSaysWhereItLookedAndWhatToDo) {
  const std::string msg = usage_error_of("openai-community/gpt2");
  EXPECT_NE(msg.find((cache / "models--openai-community--gpt2").string()), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("models"), std::string::npos) << msg;
  EXPECT_NE(msg.find("$HF_HUB_CACHE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("attnscope download openai-community/gpt2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("attnscope models"), std::string::npos) << msg;
}

TEST_F(HubCacheTest, UnknownClassicNameSuggestsTheHubsCurrentId) {
  EXPECT_NE(usage_error_of("gpt2").find("attnscope download openai-community/gpt2"),
            std::string::npos);
  EXPECT_NE(
      usage_error_of("bert-base-uncased").find("attnscope download google-bert/bert-base-uncased"),
      std::string::npos);
  EXPECT_NE(usage_error_of("tiny").find("attnscope download ORG/tiny"), std::string::npos);
}

TEST_F(HubCacheTest, RepoWithoutSnapshotIsReportedAsInterrupted) {
  fs::create_directories(cache / "models--org--m" / "blobs");
  const std::string msg = usage_error_of("org/m");
  EXPECT_NE(msg.find("has no snapshot"), std::string::npos) << msg;
}

TEST_F(HubCacheTest, FolderPathsAbsoluteRelativeAndTilde) {
  fs::path work = tmp.path() / "work";
  write_file(work / "my-model" / "config.json", "{}");
  write_file(home / "m2" / "config.json", "{}");
  ScopedCwd cwd(work);
  EXPECT_EQ(resolve_model_spec((work / "my-model").string()), work / "my-model");
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("my-model"), work / "my-model"));
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("./my-model"), work / "my-model"));
  EXPECT_EQ(resolve_model_spec("~/m2"), home / "m2");
  EXPECT_NE(usage_error_of("./missing").find("does not exist"), std::string::npos);
  write_file(work / "afile", "x");
  EXPECT_NE(usage_error_of("./afile").find("is a file"), std::string::npos);
}

TEST_F(HubCacheTest, StrayFolderWithoutConfigDoesNotHideTheCachedModel) {
  fs::path work = tmp.path() / "work";
  fs::create_directories(work / "gpt2" / "src");  // e.g. a source checkout named gpt2
  fs::path snap = make_snapshot(cache, "openai-community/gpt2", "r1");
  ScopedCwd cwd(work);
  EXPECT_EQ(resolve_model_spec("gpt2"), snap);
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("./gpt2"), work / "gpt2"));  // clearly a path
  // Nothing cached by that name: the folder it is, so opening it says config.json is missing.
  fs::create_directories(work / "stray");
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("stray"), work / "stray"));
}

TEST_F(HubCacheTest, HubRepoFolderPathOpensItsSnapshot) {
  fs::path snap = make_snapshot(cache, "org/m", "r1");
  EXPECT_EQ(resolve_model_spec((cache / "models--org--m").string()), snap);
}

TEST_F(HubCacheTest, ProjectModelsFolderIsSearchedFirst) {
  fs::path work = tmp.path() / "work";
  ScopedCwd cwd(work);
  make_snapshot(cache, "openai-community/gpt2", "r1");
  write_file(work / "models" / "gpt2" / "config.json", "{}");
  write_file(work / "models" / "org" / "nested" / "config.json", "{}");
  fs::path local_hub = make_snapshot(work / "models", "someone/local-hub", "r9");
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("gpt2"), work / "models" / "gpt2"));
  // ORG/NAME falls back to ./models/NAME when no cache has it.
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("openai-community/gpt2"),
                             cache / "models--openai-community--gpt2" / "snapshots" / "r1"));
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("other-org/gpt2"), work / "models" / "gpt2"));
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("org/nested"), work / "models" / "org" / "nested"));
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("local-hub"), local_hub));

  std::vector<ModelFolder> found = find_model_folders();
  std::vector<std::string> ids;
  for (const ModelFolder& f : found) ids.push_back(f.repo_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"gpt2", "someone/local-hub", "org/nested",
                                           "openai-community/gpt2"}));
}

TEST_F(HubCacheTest, FindModelFoldersSkipsDatasetsAndMarksEmptyRepos) {
  make_snapshot(cache, "org/a", "r1");
  fs::create_directories(cache / "models--org--b" / "refs");
  fs::create_directories(cache / "datasets--org--d" / "snapshots" / "r1");
  write_file(cache / "version.txt", "1");
  ScopedCwd cwd(tmp.path() / "work");
  std::vector<ModelFolder> found = find_model_folders();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].repo_id, "org/a");
  EXPECT_TRUE(found[0].has_snapshot);
  EXPECT_EQ(found[0].folder, cache / "models--org--a" / "snapshots" / "r1");
  EXPECT_EQ(found[1].repo_id, "org/b");
  EXPECT_FALSE(found[1].has_snapshot);
}

TEST_F(HubCacheTest, ModelFamilyFromTypeOrArchitecture) {
  using nlohmann::json;
  EXPECT_EQ(model_family(json{{"model_type", "gpt2"}}), "gpt2");
  EXPECT_EQ(model_family(json{{"model_type", "bert"}}), "bert");
  EXPECT_EQ(model_family(json{{"model_type", "mamba"}, {"architectures", {"GPT2Model"}}}), "");
  EXPECT_EQ(model_family(json{{"model_type", "llama"}}), "llama");
  EXPECT_EQ(model_family(json{{"model_type", "gemma3_text"}}), "gemma3_text");
  EXPECT_EQ(model_family(json{{"architectures", {"GPT2LMHeadModel"}}}), "gpt2");
  EXPECT_EQ(model_family(json{{"architectures", {"BertForMaskedLM"}}}), "bert");
  EXPECT_EQ(model_family(json::object()), "");
  EXPECT_EQ(model_type_name(json{{"architectures", {"T5Model"}}}), "T5Model");
  EXPECT_EQ(model_type_name(json::object()), "unknown");
}

}  // namespace
}  // namespace attnscope

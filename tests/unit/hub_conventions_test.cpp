// The Hugging Face hub's conventions (issue 25), checked against what
// huggingface_hub itself does as read from its code (constants.py,
// utils/_auth.py, file_download.py, _snapshot_download.py): the token's
// sources, offline mode, and the cache layout both write and read — a cache
// built by hand as hf_hub_download lays it out opens, and attnscope's download
// is what Python's try_to_load_from_cache resolves. The hub is the loopback
// fake hub of download_test.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "core/backend/select.h"
#include "core/model/hf/download.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/util/error.h"
#include "core/util/sha256.h"
#include "tests/unit/fake_hub_repo.h"
#include "tests/unit/fixture_http_server.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::FakeRepo;
using testing::FixtureHttpServer;
using testing::gets_for;
using testing::kRepo;
using testing::kRepoFolder;
using testing::kSha;
using testing::read_file;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;

const std::string kSha2 = "89abcdef0123456789abcdef0123456789abcdef";

// huggingface_hub's try_to_load_from_cache (file_download.py), step by step,
// written from its code and independent of attnscope's pick_snapshot:
// refs/<revision> names the commit, a .no_exist entry answers "known missing",
// snapshots/<commit>/<file> must be a file.
struct CacheLookup {
  enum Kind { kNone, kNoExist, kFile } kind = kNone;
  fs::path path;
};
CacheLookup try_to_load_from_cache(const fs::path& cache_dir, const std::string& repo_id,
                                   const std::string& filename, std::string revision = "main") {
  std::string folder = "models";
  for (size_t start = 0;;) {  // "--".join(["models", *repo_id.split("/")])
    const size_t slash = repo_id.find('/', start);
    folder += "--" + repo_id.substr(start, slash - start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const fs::path repo_cache = cache_dir / folder;
  if (!fs::is_directory(repo_cache)) return {};
  const fs::path refs_dir = repo_cache / "refs", snapshots_dir = repo_cache / "snapshots";
  if (fs::is_directory(refs_dir) && fs::is_regular_file(refs_dir / revision))
    revision = read_file(refs_dir / revision);  // f.read(): the whole file, nothing stripped
  if (fs::is_regular_file(repo_cache / ".no_exist" / revision / filename))
    return {CacheLookup::kNoExist, {}};
  if (!fs::exists(snapshots_dir)) return {};
  bool cached = false;
  for (const auto& entry : fs::directory_iterator(snapshots_dir))
    cached |= entry.path().filename() == revision;
  if (!cached) return {};
  const fs::path file = snapshots_dir / revision / filename;
  if (!fs::is_regular_file(file)) return {};
  return {CacheLookup::kFile, file};
}

class HubConventionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_hf_env(env, tmp.path() / "home");
    env.set("http_proxy", std::nullopt).set("HTTP_PROXY", std::nullopt);
    env.set("all_proxy", std::nullopt).set("ALL_PROXY", std::nullopt);
    env.set("no_proxy", "127.0.0.1,localhost").set("NO_PROXY", "127.0.0.1,localhost");
    env.set("HF_ENDPOINT", server.endpoint());
    env.set("HF_HOME", (tmp.path() / "hf").string());  // the cache: $HF_HOME/hub
    repo.install(server);
    request.repo_id = kRepo;
    request.stall_timeout_s = 10;
  }
  fs::path cache() const { return tmp.path() / "hf" / "hub"; }
  fs::path repo_dir() const { return cache() / kRepoFolder; }
  fs::path snapshot(const std::string& sha = kSha) const { return repo_dir() / "snapshots" / sha; }
  std::vector<std::string> needed() const {
    return {"vocab.json", "merges.txt", "model.safetensors", "config.json"};
  }

  TempDir tmp;
  ScopedEnv env;
  FixtureHttpServer server;
  FakeRepo repo;
  DownloadRequest request;
};

TEST_F(HubConventionsTest, DownloadIsTheLayoutHfHubDownloadWrites) {
  const DownloadResult result = download_model(request);
  EXPECT_EQ(result.folder, snapshot());
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"),
            kSha);  // the bare hash, as Python writes
  for (const std::string& name : needed()) {
    SCOPED_TRACE(name);
    // The blob is named by the ETag the hub sent: the SHA-256 for an LFS file,
    // else the git id.
    const std::string etag = repo.etag(name);
    EXPECT_EQ(etag.size(), testing::is_lfs_name(name) ? 64u : 40u);
    const fs::path blob = repo_dir() / "blobs" / etag;
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(blob)));
    EXPECT_EQ(read_file(blob), repo.files.at(name));
    const fs::path pointer = snapshot() / name;
    ASSERT_TRUE(fs::is_symlink(pointer));
    EXPECT_EQ(fs::read_symlink(pointer),
              fs::path("../../blobs/" + etag));  // relative
    EXPECT_TRUE(fs::exists(cache() / ".locks" / kRepoFolder / (etag + ".lock")));
    // Python's lookup finds it where it would look.
    const CacheLookup hit = try_to_load_from_cache(cache(), kRepo, name);
    ASSERT_EQ(hit.kind, CacheLookup::kFile);
    EXPECT_EQ(hit.path, pointer);
    EXPECT_TRUE(fs::equivalent(hit.path, blob));
  }
  // Only the needed files, nothing half-written, nothing else in blobs/.
  size_t blobs = 0;
  for (const auto& entry : fs::directory_iterator(repo_dir() / "blobs")) {
    ++blobs;
    EXPECT_EQ(entry.path().string().find("incomplete"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(blobs, needed().size());
  EXPECT_EQ(try_to_load_from_cache(cache(), kRepo, "README.md").kind, CacheLookup::kNone);
  // The HEAD that named each blob asked for the commit's file, with identity
  // encoding.
  for (const std::string& name : needed()) {
    bool head = false;
    for (const auto& r : server.requests_for(repo.path(name))) head |= r.method == "HEAD";
    EXPECT_TRUE(head) << name;
  }
}

TEST_F(HubConventionsTest, ASecondRevisionSharingAFileReusesItsBlob) {
  download_model(request);
  FakeRepo v2 = repo;
  v2.sha = kSha2;
  v2.revision = "v2";
  v2.files["config.json"] = R"({"model_type": "gpt2", "n_layer": 2, "n_head": 2, "v": 2})";
  v2.install(server);
  request.revision = "v2";
  const DownloadResult result = download_model(request);
  EXPECT_EQ(result.folder, snapshot(kSha2));
  EXPECT_EQ(read_file(repo_dir() / "refs" / "v2"), kSha2);
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), kSha);
  // The weights: fetched once, one blob both snapshots link to, one copy on
  // disk.
  EXPECT_EQ(gets_for(server, repo.weights_path()).size(), 1u);
  EXPECT_TRUE(gets_for(server, v2.weights_path()).empty());
  const fs::path blob = repo_dir() / "blobs" / repo.etag("model.safetensors");
  EXPECT_TRUE(fs::equivalent(snapshot() / "model.safetensors", blob));
  EXPECT_TRUE(fs::equivalent(snapshot(kSha2) / "model.safetensors", blob));
  EXPECT_EQ(fs::hard_link_count(blob), 1u);
  // The changed config is a blob of its own.
  EXPECT_EQ(read_file(snapshot(kSha2) / "config.json"), v2.files.at("config.json"));
  EXPECT_EQ(read_file(snapshot() / "config.json"), repo.files.at("config.json"));
  EXPECT_EQ(fs::read_symlink(snapshot(kSha2) / "config.json"),
            fs::path("../../blobs/" + v2.etag("config.json")));
  size_t blobs = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(repo_dir() / "blobs")) ++blobs;
  EXPECT_EQ(blobs, needed().size() + 1);
  const CacheLookup hit = try_to_load_from_cache(cache(), kRepo, "config.json", "v2");
  ASSERT_EQ(hit.kind, CacheLookup::kFile);
  EXPECT_EQ(hit.path, snapshot(kSha2) / "config.json");
}

// The hub's non-LFS files answer a HEAD with a relative redirect (a renamed
// repo, the resolve cache): followed for the ETag; the CDN's absolute redirect
// is not (its URL is signed for GET).
TEST_F(HubConventionsTest, RelativeRedirectOfTheHeadIsFollowedTheCdnsIsNot) {
  const std::string cached = "/api/resolve-cache/models/" + kRepo + "/" + kSha + "/config.json";
  server.redirect(repo.path("config.json"), cached);
  server.headers(repo.path("config.json"), "X-Repo-Commit: " + kSha + "\r\n");
  server.serve(cached, repo.files.at("config.json"));
  server.headers(cached, repo.headers("config.json"));
  server.redirect(repo.weights_path(), server.endpoint() + "/cdn/weights");
  server.serve("/cdn/weights", repo.files.at("model.safetensors"));
  download_model(request);
  EXPECT_EQ(fs::read_symlink(snapshot() / "config.json"),
            fs::path("../../blobs/" + repo.etag("config.json")));
  EXPECT_EQ(read_file(snapshot() / "config.json"), repo.files.at("config.json"));
  bool followed = false;  // the listing's blobId names the same blob: check the
                          // HEAD went there
  for (const auto& r : server.requests_for(cached)) followed |= r.method == "HEAD";
  EXPECT_TRUE(followed);
  for (const auto& r : server.requests_for("/cdn/weights")) EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(fs::read_symlink(snapshot() / "model.safetensors"),
            fs::path("../../blobs/" + repo.etag("model.safetensors")));
}

// ---- token
// -------------------------------------------------------------------------------

TEST_F(HubConventionsTest, TokenComesFromGetTokensSourcesInItsOrder) {
  const fs::path home = tmp.path() / "home";
  EXPECT_EQ(find_hub_token().value, "");
  EXPECT_EQ(hub_token_path(), tmp.path() / "hf" / "token");
  // $HF_HOME/token, stripped of whitespace and line breaks.
  write_file(tmp.path() / "hf" / "token", "  hf_home_token\r\n");
  EXPECT_EQ(find_hub_token().value, "hf_home_token");
  EXPECT_EQ(find_hub_token().source, (tmp.path() / "hf" / "token").string());
  // $HF_TOKEN_PATH replaces it (`~` and $VARS expanded).
  write_file(home / "elsewhere" / "tok", "hf_path_token\n");
  env.set("HF_TOKEN_PATH", "~/elsewhere/tok");
  EXPECT_EQ(find_hub_token().value, "hf_path_token");
  env.set("TOKDIR", (home / "elsewhere").string()).set("HF_TOKEN_PATH", "${TOKDIR}/tok");
  EXPECT_EQ(find_hub_token().value, "hf_path_token");
  // An empty or blank token file is no token.
  write_file(home / "elsewhere" / "tok", " \n\n");
  EXPECT_EQ(find_hub_token().value, "");
  // The environment first: HF_TOKEN, else HUGGING_FACE_HUB_TOKEN (an empty
  // HF_TOKEN gives way).
  write_file(home / "elsewhere" / "tok", "hf_path_token");
  env.set("HUGGING_FACE_HUB_TOKEN", "hf_legacy_env");
  EXPECT_EQ(find_hub_token().value, "hf_legacy_env");
  env.set("HF_TOKEN", "");
  EXPECT_EQ(find_hub_token().value, "hf_legacy_env");
  env.set("HF_TOKEN", " hf_env\n");
  EXPECT_EQ(find_hub_token().value, "hf_env");
  EXPECT_EQ(find_hub_token().source, "$HF_TOKEN");
  // HF_HUB_DISABLE_IMPLICIT_TOKEN: none at all.
  env.set("HF_HUB_DISABLE_IMPLICIT_TOKEN", "yes");
  EXPECT_EQ(find_hub_token().value, "");
}

TEST_F(HubConventionsTest, TokenFileDefaultsFollowHfHome) {
  env.set("HF_HOME", std::nullopt);
  const fs::path home = tmp.path() / "home";
  EXPECT_EQ(hub_token_path(), home / ".cache" / "huggingface" / "token");
  write_file(home / ".cache" / "huggingface" / "token", "hf_default\n");
  EXPECT_EQ(find_hub_token().value, "hf_default");
  env.set("XDG_CACHE_HOME", (tmp.path() / "xdg").string());
  EXPECT_EQ(hub_token_path(), tmp.path() / "xdg" / "huggingface" / "token");
  EXPECT_EQ(find_hub_token().value, "");
  env.set("HUGGINGFACE_HUB_CACHE", (tmp.path() / "legacy").string());
  EXPECT_EQ(default_hub_cache(), tmp.path() / "legacy");
  env.set("HF_HUB_CACHE", (tmp.path() / "new").string());
  EXPECT_EQ(default_hub_cache(), tmp.path() / "new");
}

// Each source reaches the hub as "Authorization: Bearer <token>", on every
// request (the listing, the HEADs, the files).
TEST_F(HubConventionsTest, TheTokenFromEachSourceIsSentAsABearer) {
  struct Source {
    std::string name, token;
    std::function<void()> set;
  };
  const fs::path home = tmp.path() / "home";
  const std::vector<Source> sources = {
      {"HF_TOKEN", "hf_from_env", [&] { env.set("HF_TOKEN", "hf_from_env"); }},
      {"HF_TOKEN_PATH", "hf_from_path",
       [&] {
         write_file(tmp.path() / "t" / "token", "hf_from_path\n");
         env.set("HF_TOKEN_PATH", (tmp.path() / "t" / "token").string());
       }},
      {"HF_HOME/token", "hf_from_home",
       [&] { write_file(tmp.path() / "hf" / "token", "hf_from_home\n"); }},
      {"~/.cache/huggingface/token", "hf_from_default", [&] {
         env.set("HF_HOME", std::nullopt);
         env.set("HF_HUB_CACHE", (tmp.path() / "hf" / "hub").string());
         write_file(home / ".cache" / "huggingface" / "token", "hf_from_default\n");
       }}};
  for (const Source& source : sources) {
    SCOPED_TRACE(source.name);
    ScopedEnv local;
    for (const char* name : {"HF_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "HF_HUB_CACHE"})
      local.set(name,
                std::getenv(name) ? std::optional<std::string>(std::getenv(name)) : std::nullopt);
    fs::remove_all(cache());
    fs::remove(tmp.path() / "hf" / "token");
    source.set();
    const size_t before = server.requests().size();
    download_model(request);
    const auto reqs = server.requests();
    ASSERT_GT(reqs.size(), before + 4);
    for (size_t i = before; i < reqs.size(); ++i)
      EXPECT_EQ(reqs[i].authorization, "Bearer " + source.token) << reqs[i].path;
  }
}

TEST_F(HubConventionsTest, AccessDeniedSaysWhereATokenIsReadFromAndNeverShowsIt) {
  server.fail("/api/models/" + kRepo + "/revision/main", "401 Unauthorized");
  try {
    download_model(request);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("HTTP 401"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no token was sent"), std::string::npos) << msg;
    EXPECT_NE(msg.find("set HF_TOKEN"), std::string::npos) << msg;
    EXPECT_NE(msg.find("huggingface-cli login"), std::string::npos) << msg;
    EXPECT_NE(msg.find((tmp.path() / "hf" / "token").string()), std::string::npos) << msg;
  }
  write_file(tmp.path() / "hf" / "token", "hf_SECRET_value\n");
  server.fail("/api/models/" + kRepo + "/revision/main", "");
  server.fail(repo.weights_path(), "403 Forbidden");  // a gated model's weights
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("HTTP 403"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the token from " + (tmp.path() / "hf" / "token").string()),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("hf_SECRET_value"), std::string::npos) << msg;
  }
  EXPECT_EQ(server.requests().back().authorization, "Bearer hf_SECRET_value");
}

// ---- offline mode
// ------------------------------------------------------------------------

TEST_F(HubConventionsTest, OfflineModeReadsTheVariablesAsHuggingFaceHubDoes) {
  EXPECT_EQ(hub_offline_setting(), "");
  for (const char* on : {"1", "ON", "on", "Yes", "TRUE", "true"}) {
    env.set("HF_HUB_OFFLINE", on);
    EXPECT_EQ(hub_offline_setting(), std::string("HF_HUB_OFFLINE=") + on);
  }
  for (const char* off : {"0", "off", "no", "false", " 1", "2"}) {
    env.set("HF_HUB_OFFLINE", off);
    EXPECT_EQ(hub_offline_setting(), "") << off;
  }
  env.set("TRANSFORMERS_OFFLINE", "1");
  EXPECT_EQ(hub_offline_setting(), "") << "a set HF_HUB_OFFLINE wins, even saying no";
  env.set("HF_HUB_OFFLINE", "");
  EXPECT_EQ(hub_offline_setting(), "TRANSFORMERS_OFFLINE=1");
  env.set("HF_HUB_OFFLINE", std::nullopt);
  EXPECT_EQ(hub_offline_setting(), "TRANSFORMERS_OFFLINE=1");
}

TEST_F(HubConventionsTest, OfflineModeNeverTouchesTheNetwork) {
  env.set("HF_HUB_OFFLINE", "1");
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("offline mode is on (HF_HUB_OFFLINE=1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not in the hub cache"), std::string::npos) << msg;
    EXPECT_NE(msg.find(repo_dir().string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_TRUE(server.requests().empty());
  // Opening a model that is not there says offline mode is on, in one line.
  try {
    resolve_model_spec(kRepo);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("offline mode is on: HF_HUB_OFFLINE=1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no model '" + kRepo + "' found"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }

  // Once downloaded, offline mode answers from the cache (refs/main -> the
  // snapshot).
  env.set("HF_HUB_OFFLINE", std::nullopt);
  download_model(request);
  const size_t online_requests = server.requests().size();
  env.set("HF_HUB_OFFLINE", "yes");
  const DownloadResult cached = download_model(request);
  EXPECT_TRUE(cached.offline);
  EXPECT_EQ(cached.folder, snapshot());
  EXPECT_EQ(cached.commit, kSha);
  EXPECT_EQ(cached.bytes_fetched, 0u);
  EXPECT_TRUE(fs::equivalent(resolve_model_spec(kRepo), snapshot()));
  request.revision = "v9";
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    EXPECT_NE(std::string(e.what()).find("does not know that revision"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(server.requests().size(), online_requests);
}

// ---- reading what Python wrote; what earlier attnscope versions wrote
// ----------------------

// A cache built by hand as hf_hub_download lays it out: blobs named by ETag,
// relative symlinks, refs/main without a newline, an older snapshot, .no_exist
// and .locks entries, a half-written blob of another download. attnscope opens
// the snapshot refs/main names (offline too), and the model it opens computes
// what the same files opened as a plain folder compute.
TEST_F(HubConventionsTest, ACacheHuggingFaceHubWroteOpens) {
  const fs::path fixture = fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32";
  const fs::path repo_cache = cache() / kRepoFolder;
  for (const auto& entry : fs::directory_iterator(fixture)) {
    const std::string name = entry.path().filename().string();
    const std::string content = read_file(entry.path());
    const std::string etag =
        testing::is_lfs_name(name) ? sha256_hex(content) : testing::git_blob_id(content);
    write_file(repo_cache / "blobs" / etag, content);
    fs::create_directories(repo_cache / "snapshots" / kSha);
    fs::create_symlink("../../blobs/" + etag, repo_cache / "snapshots" / kSha / name);
    write_file(cache() / ".locks" / kRepoFolder / (etag + ".lock"), "");
  }
  write_file(repo_cache / "refs" / "main", kSha);
  write_file(repo_cache / ".no_exist" / kSha / "tokenizer.json", "");
  write_file(repo_cache / "blobs" / "ffffffffffffffffffffffffffffffffffffffff.3f2a9c1d.incomplete",
             "partial");
  // An older commit's snapshot written later (newer mtime) must not win over
  // refs/main.
  write_file(repo_cache / "snapshots" / kSha2 / "config.json", read_file(fixture / "config.json"));

  const fs::path resolved = resolve_model_spec(kRepo);
  EXPECT_EQ(resolved, repo_cache / "snapshots" / kSha);
  EXPECT_EQ(try_to_load_from_cache(cache(), kRepo, "tokenizer.json").kind, CacheLookup::kNoExist);
  bool listed = false;
  for (const ModelFolder& f : find_model_folders())
    listed |= f.repo_id == kRepo && f.folder == resolved;
  EXPECT_TRUE(listed);

  env.set("HF_HUB_OFFLINE", "1");
  const auto cached = open_model(kRepo);
  const auto plain = open_model(fixture.string());
  std::shared_ptr<Backend> cpu = select_backend(BackendChoice::kCpu).backend;
  const AttentionTrace a = cached->run("the bank of the river", *cpu);
  const AttentionTrace b = plain->run("the bank of the river", *cpu);
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  ASSERT_FALSE(a.attention.empty());
  ASSERT_EQ(a.attention.size(), b.attention.size());
  for (size_t l = 0; l < a.attention.size(); ++l)
    for (size_t h = 0; h < a.attention[l].size(); ++h)
      EXPECT_EQ(a.attention[l][h], b.attention[l][h]) << l << "." << h;
  EXPECT_TRUE(server.requests().empty());  // nothing asked of the hub
}

// attnscope before issue 25 wrote plain files into snapshots/<commit>/. They
// open as they are, and the next download moves each into blobs/ and links it:
// nothing is fetched again.
TEST_F(HubConventionsTest, AnEarlierAttnscopesPlainFilesOpenAndMoveIntoBlobs) {
  for (const std::string& name : needed()) write_file(snapshot() / name, repo.files.at(name));
  write_file(repo_dir() / "refs" / "main", kSha);
  EXPECT_EQ(resolve_model_spec(kRepo), snapshot());
  const DownloadResult result = download_model(request);
  EXPECT_EQ(result.bytes_fetched, 0u);
  for (const std::string& name : needed()) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(gets_for(server, repo.path(name)).empty());
    ASSERT_TRUE(fs::is_symlink(snapshot() / name));
    EXPECT_EQ(fs::read_symlink(snapshot() / name), fs::path("../../blobs/" + repo.etag(name)));
    EXPECT_EQ(read_file(snapshot() / name), repo.files.at(name));
    EXPECT_EQ(fs::hard_link_count(repo_dir() / "blobs" / repo.etag(name)),
              1u);  // moved
  }
  EXPECT_EQ(resolve_model_spec(kRepo), snapshot());
}

TEST_F(HubConventionsTest, AnEarlierAttnscopesPartialFileIsResumed) {
  const std::string& weights = repo.files.at("model.safetensors");
  write_file(snapshot() / "model.safetensors.incomplete", weights.substr(0, 70000));
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), weights);
  const auto reqs = gets_for(server, repo.weights_path());
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].range, "bytes=70000-");
  EXPECT_FALSE(fs::exists(snapshot() / "model.safetensors.incomplete"));
}

// ---- locking with huggingface_hub
// --------------------------------------------------------

// Python holds .locks/<repo>/<etag>.lock (filelock's flock) while it writes a
// blob: attnscope waits for it, says so, and then links the blob Python wrote
// instead of fetching it again.
TEST_F(HubConventionsTest, ABlobPythonIsDownloadingIsWaitedForAndReused) {
  const std::string etag = repo.etag("model.safetensors");
  const fs::path lock_file = cache() / ".locks" / kRepoFolder / (etag + ".lock");
  fs::create_directories(lock_file.parent_path());
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::atomic<bool> waited{false};
  std::string waiting_line;
  std::thread python([&] {
    for (int i = 0; i < 1000 && !waited; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // Python's download ends: its unique temporary file renamed into place, the
    // lock released.
    const fs::path tmp_file = repo_dir() / "blobs" / (etag + ".1a2b3c4d.incomplete");
    write_file(tmp_file, repo.files.at("model.safetensors"));
    fs::rename(tmp_file, repo_dir() / "blobs" / etag);
    ::flock(fd, LOCK_UN);
    ::close(fd);
  });
  download_model(request, [&](const DownloadProgress& p) {
    if (p.waiting_for_lock && !waited) {
      waiting_line = format_download_progress(p);
      waited = true;
    }
  });
  python.join();
  EXPECT_TRUE(waited);
  EXPECT_NE(waiting_line.find("model.safetensors  waiting for another download of the same file"),
            std::string::npos)
      << waiting_line;
  EXPECT_TRUE(gets_for(server, repo.weights_path()).empty());
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
  EXPECT_EQ(fs::read_symlink(snapshot() / "model.safetensors"), fs::path("../../blobs/" + etag));
}

}  // namespace
}  // namespace attnscope

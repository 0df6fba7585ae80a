// download_model() against a local fixture server (tests/unit/fixture_http_server.h) that plays the
// hub: the revision API, resolve/ URLs, ranges, dropped connections, 404s.
#include "core/model/hf/download.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/model/hf/hf_families.h"
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
using testing::FixtureHttpServer;
using testing::read_file;
using testing::ScopedEnv;
using testing::TempDir;

using testing::FakeRepo;
using testing::gets_for;
using testing::kRepo;
using testing::kSha;

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_hf_env(env, tmp.path() / "home");
    // Loopback must never go through a proxy the environment may name.
    env.set("http_proxy", std::nullopt).set("HTTP_PROXY", std::nullopt);
    env.set("all_proxy", std::nullopt).set("ALL_PROXY", std::nullopt);
    env.set("no_proxy", "127.0.0.1,localhost").set("NO_PROXY", "127.0.0.1,localhost");
    env.set("HF_ENDPOINT", server.endpoint());
    repo.install(server);
    request.repo_id = kRepo;
    request.cache_dir = tmp.path() / "cache";
    request.stall_timeout_s = 10;
  }
  fs::path repo_dir() const { return request.cache_dir / "models--test-org--tiny-gpt2"; }
  fs::path snapshot() const { return repo_dir() / "snapshots" / kSha; }
  // Where the weights' partial download waits to be resumed: beside their blob.
  fs::path weights_part() const {
    return repo_dir() / "blobs" / (repo.etag("model.safetensors") + ".incomplete");
  }

  TempDir tmp;
  ScopedEnv env;
  FixtureHttpServer server;
  FakeRepo repo;
  DownloadRequest request;
};

TEST_F(DownloadTest, FetchesOnlyNeededFilesIntoTheCacheLayout) {
  env.set("HF_TOKEN", "hf_secret");
  // The hub sends weights through a CDN redirect.
  server.redirect(repo.weights_path(), server.endpoint() + "/cdn/blob1");
  server.serve("/cdn/blob1", repo.files.at("model.safetensors"));
  std::vector<DownloadProgress> seen;
  DownloadResult result =
      download_model(request, [&](const DownloadProgress& p) { seen.push_back(p); });

  EXPECT_EQ(result.folder, snapshot());
  EXPECT_EQ(result.commit, kSha);
  const std::vector<std::string> expected_files = {"vocab.json", "merges.txt", "model.safetensors",
                                                   "config.json"};
  EXPECT_EQ(result.files, expected_files);
  std::uint64_t total = 0;
  for (const std::string& f : expected_files) {
    EXPECT_EQ(read_file(snapshot() / f), repo.files.at(f)) << f;
    total += repo.files.at(f).size();
  }
  EXPECT_EQ(result.bytes_fetched, total);
  EXPECT_FALSE(fs::exists(snapshot() / "pytorch_model.bin"));
  EXPECT_FALSE(fs::exists(snapshot() / "README.md"));
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), kSha);
  for (const auto& entry : fs::recursive_directory_iterator(request.cache_dir))
    EXPECT_EQ(entry.path().string().find(".incomplete"), std::string::npos) << entry.path();

  // The server saw the API call, the token, and no request for unneeded files.
  auto reqs = server.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs[0].path, "/api/models/" + kRepo + "/revision/main");
  for (const auto& r : reqs) {
    EXPECT_EQ(r.authorization, "Bearer hf_secret") << r.path;
    EXPECT_EQ(r.path.find("pytorch_model"), std::string::npos);
    EXPECT_EQ(r.path.find("README"), std::string::npos);
  }
  EXPECT_EQ(server.requests_for("/cdn/blob1").size(), 1u);

  // Progress: totals known from the API, ends complete, never goes backwards.
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().total, total);
  EXPECT_EQ(seen.back().done, total);
  EXPECT_DOUBLE_EQ(seen.back().fraction(), 1.0);
  EXPECT_EQ(seen.back().file_count, 4);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].done, seen[i - 1].done);

  // A second run finds everything in place and fetches no file again.
  const size_t before = server.requests().size();
  DownloadResult again = download_model(request);
  EXPECT_EQ(again.bytes_fetched, 0u);
  EXPECT_EQ(server.requests().size(), before + 1);  // only the API call
}

TEST_F(DownloadTest, DroppedConnectionResumesWithRangeInTheSameCall) {
  server.drop_after(repo.weights_path(), 100000);
  DownloadResult result = download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
  auto reqs = gets_for(server, repo.weights_path());
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].range, "");
  EXPECT_EQ(reqs[1].range, "bytes=100000-");
}

TEST_F(DownloadTest, InterruptedDownloadResumesInALaterCall) {
  request.attempts_per_file = 1;
  server.drop_after(repo.weights_path(), 70000);
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("resume"), std::string::npos) << e.what();
  }
  const fs::path part = weights_part();
  ASSERT_TRUE(fs::exists(part));
  EXPECT_EQ(fs::file_size(part), 70000u);
  EXPECT_EQ(read_file(part), repo.files.at("model.safetensors").substr(0, 70000));
  EXPECT_FALSE(fs::exists(repo_dir() / "refs" / "main"));  // not a finished download
  EXPECT_FALSE(fs::exists(snapshot() / "config.json"));    // fetched last, so not yet there

  DownloadResult result = download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
  EXPECT_FALSE(fs::exists(part));
  EXPECT_EQ(result.bytes_fetched, repo.files.at("model.safetensors").size() - 70000 +
                                      repo.files.at("config.json").size());
  auto reqs = gets_for(server, repo.weights_path());
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=70000-");
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), kSha);
}

TEST_F(DownloadTest, ServerIgnoringRangeRestartsTheFileCleanly) {
  // A partial file whose bytes are wrong: a 200 answer must replace it, not append to it.
  testing::write_file(weights_part(), std::string(5000, 'x'));
  server.ignore_range(true);
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
  auto reqs = gets_for(server, repo.weights_path());
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].range, "bytes=5000-");
}

TEST_F(DownloadTest, PartialFileTheServerCannotContinueStartsOver) {
  // Without sizes from the API (nor X-Linked-Size from a redirect) a leftover part can be as long
  // as the file: the server answers 416.
  nlohmann::json siblings = nlohmann::json::array();
  for (const auto& [name, body] : repo.files) siblings.push_back({{"rfilename", name}});
  server.serve("/api/models/" + kRepo + "/revision/main",
               nlohmann::json{{"sha", kSha}, {"siblings", siblings}}.dump());
  const std::string& weights = repo.files.at("model.safetensors");
  const std::string etag = "00112233445566778899aabbccddeeff00112233";
  server.headers(repo.weights_path(), "ETag: \"" + etag + "\"\r\n");
  server.redirect(repo.weights_path(), server.endpoint() + "/cdn/weights");
  server.serve("/cdn/weights", weights);
  testing::write_file(repo_dir() / "blobs" / (etag + ".incomplete"),
                      std::string(weights.size(), 'y'));
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), weights);
  EXPECT_EQ(fs::read_symlink(snapshot() / "model.safetensors"), "../../blobs/" + etag);
  auto reqs = gets_for(server, "/cdn/weights");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].range, "bytes=" + std::to_string(weights.size()) + "-");
  EXPECT_EQ(reqs[1].range, "");
}

TEST_F(DownloadTest, SecondDownloadOfTheSameRepoIsRefusedWhileOneRuns) {
  server.throttle(16384, std::chrono::milliseconds(20));
  std::atomic<bool> first_started{false}, cancel{false};
  std::thread first([&] {
    try {
      download_model(
          request,
          [&](const DownloadProgress& p) {
            if (p.file_done > 0) first_started = true;
          },
          &cancel);
    } catch (const DownloadCancelled&) {
    }
  });
  for (int i = 0; i < 500 && !first_started; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(first_started);
  try {
    download_model(request);
    ADD_FAILURE() << "expected DownloadError";
  } catch (const DownloadError& e) {
    EXPECT_NE(std::string(e.what()).find("already being downloaded"), std::string::npos)
        << e.what();
  }
  cancel = true;
  first.join();
  // The lock goes with the first download: now a download runs.
  server.throttle(0, std::chrono::milliseconds(0));
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
}

TEST_F(DownloadTest, UnknownModelIsAClearUsageError) {
  request.repo_id = "test-org/no-such-model";
  try {
    download_model(request);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("model test-org/no-such-model not found on the hub"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(request.cache_dir / "models--test-org--no-such-model"));
}

TEST(Sha256, KnownAnswers) {  // FIPS 180-2's examples
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDir tmp;
  {
    std::ofstream f(tmp.path() / "abc");
    for (int i = 0; i < 1000000; ++i) f << 'a';  // a million a's: more than one 1 MB read block
  }
  EXPECT_EQ(sha256_file_hex(tmp.path() / "abc"),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_THROW(sha256_file_hex(tmp.path() / "missing"), Error);
}

// Bytes damaged on the way (the right size, other content): caught by the hub's SHA-256, not kept
// as the model, not resumed from; once the server sends the right bytes the download completes.
TEST_F(DownloadTest, DamagedWeightsAreCaughtBySha256AndFetchedAgain) {
  std::string damaged = repo.files.at("model.safetensors");
  damaged[123456] ^= 0x01;
  server.serve(repo.weights_path(), damaged);
  request.attempts_per_file = 2;
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    EXPECT_NE(std::string(e.what()).find("has SHA-256 " + sha256_hex(damaged) + ", the hub lists " +
                                         sha256_hex(repo.files.at("model.safetensors"))),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(snapshot() / "model.safetensors"));
  EXPECT_FALSE(fs::exists(weights_part()));
  EXPECT_EQ(gets_for(server, repo.weights_path()).size(), 2u);
  for (const auto& r : gets_for(server, repo.weights_path())) EXPECT_EQ(r.range, "");

  server.serve(repo.weights_path(), repo.files.at("model.safetensors"));
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
}

TEST_F(DownloadTest, MissingFileIsAClearError) {
  FixtureHttpServer other;  // a hub whose file URLs all 404
  nlohmann::json api = {
      {"sha", kSha},
      {"siblings", {{{"rfilename", "config.json"}}, {{"rfilename", "model.safetensors"}}}}};
  other.serve("/api/models/" + kRepo + "/revision/main", api.dump());
  env.set("HF_ENDPOINT", other.endpoint());
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors not found"), std::string::npos)
        << e.what();
  }
}

TEST_F(DownloadTest, UnreachableHubNamesTheCurlError) {
  int port = 0;
  {
    FixtureHttpServer closed;  // take an ephemeral port, then free it: nothing listens there
    port = std::stoi(closed.endpoint().substr(closed.endpoint().rfind(':') + 1));
  }
  request.endpoint = "http://127.0.0.1:" + std::to_string(port);
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot reach the hub at " + request.endpoint), std::string::npos) << msg;
    EXPECT_NE(msg.find("onnect"), std::string::npos) << msg;  // curl: "Failed to connect …"
  }
}

// issue 15: a hub that accepts the connection and then says nothing was waited on for 60 s per
// attempt, with no feedback.
TEST_F(DownloadTest, SilentHubFailsAfterTheStallTimeoutWithFeedback) {
  server.silent("/api/models/" + kRepo + "/revision/main");
  request.stall_timeout_s = 3;
  std::vector<std::string> lines;
  const auto start = std::chrono::steady_clock::now();
  try {
    download_model(
        request, [&](const DownloadProgress& p) { lines.push_back(format_download_progress(p)); });
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("accepted the connection but sent nothing for 3 s"), std::string::npos)
        << msg;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 8.0);
  ASSERT_FALSE(lines.empty()) << "no feedback while waiting";
  EXPECT_NE(lines.front().find("waiting for the server"), std::string::npos) << lines.front();
}

TEST_F(DownloadTest, SilentFileServerIsNotAskedAgainAndAgain) {
  server.silent("/" + kRepo + "/resolve/" + kSha + "/merges.txt");
  request.stall_timeout_s = 2;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(download_model(request), DownloadError);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 6.0) << "retried a server that never answered";
}

// issue 15: a file listed at 761 bytes whose server streams 64 MB without a length was read whole
// on each of 4 attempts.
TEST_F(DownloadTest, ServerSendingMoreThanTheListedSizeIsCutOff) {
  server.stream_endless("/" + kRepo + "/resolve/" + kSha + "/merges.txt", 64u << 20);
  try {
    download_model(request);
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    const std::string listed = std::to_string(repo.files.at("merges.txt").size());
    EXPECT_NE(msg.find("sent more than the " + listed + " bytes the hub lists for merges.txt"),
              std::string::npos)
        << msg;
  }
  // What the kernel buffered before the client closed, not 64 MB (nor 4 x 64 MB).
  EXPECT_LT(server.bytes_streamed(), 16u << 20);
  for (const auto& entry : fs::recursive_directory_iterator(repo_dir()))
    EXPECT_EQ(entry.path().string().find(".incomplete"), std::string::npos) << entry.path();
}

TEST_F(DownloadTest, CancelStopsTheTransferAndKeepsThePartForResume) {
  server.throttle(16384, std::chrono::milliseconds(20));  // ~19 chunks: about 0.4 s for the weights
  std::atomic<bool> cancel{false};
  auto on_progress = [&](const DownloadProgress& p) {
    if (p.file == "model.safetensors" && p.file_done > 0) cancel = true;
  };
  EXPECT_THROW(download_model(request, on_progress, &cancel), DownloadCancelled);
  const fs::path part = weights_part();
  ASSERT_TRUE(fs::exists(part));
  const std::uint64_t kept = fs::file_size(part);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, repo.files.at("model.safetensors").size());
  EXPECT_FALSE(fs::exists(repo_dir() / "refs" / "main"));

  server.throttle(0, std::chrono::milliseconds(0));
  download_model(request);
  EXPECT_EQ(read_file(snapshot() / "model.safetensors"), repo.files.at("model.safetensors"));
  auto reqs = gets_for(server, repo.weights_path());
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=" + std::to_string(kept) + "-");
}

TEST_F(DownloadTest, CancelBeforeStartFetchesNothing) {
  std::atomic<bool> cancel{true};
  EXPECT_THROW(download_model(request, {}, &cancel), DownloadCancelled);
  EXPECT_TRUE(server.requests_for(repo.weights_path()).empty());
}

TEST_F(DownloadTest, UnsupportedModelTypeIsRefusedBeforeDownloading) {
  repo.config = {{"model_type", "whisper"}};  // speech recognition: no family reads it
  repo.install(server);
  try {
    download_model(request);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("model type whisper is not supported yet"),
              std::string::npos)
        << e.what();
    // What opens is the family registry's list (it once said "gpt2 and bert families").
    for (const HfFamily& f : hf_families())
      EXPECT_NE(std::string(e.what()).find(f.model_type), std::string::npos) << e.what();
  }
  EXPECT_TRUE(server.requests_for(repo.weights_path()).empty());
}

TEST_F(DownloadTest, DownloadedModelResolvesFromTheCache) {
  env.set("HF_HUB_CACHE", request.cache_dir.string());
  request.cache_dir.clear();  // the default cache: $HF_HUB_CACHE
  DownloadResult result = download_model(request);
  EXPECT_TRUE(fs::equivalent(resolve_model_spec(kRepo), result.folder));
  EXPECT_TRUE(fs::equivalent(resolve_model_spec("tiny-gpt2"), result.folder));
  // Opening reaches the GPT-2 loader (which fails on these random weights, or is not built yet).
  std::vector<std::string> steps;
  EXPECT_THROW(
      open_model("tiny-gpt2", [&](double, const std::string& what) { steps.push_back(what); }),
      ModelError);
  bool reached_loader = false;
  for (const std::string& s : steps)
    reached_loader |= s.find("loading gpt2 model from " + result.folder.string()) == 0;
  EXPECT_TRUE(reached_loader);
}

TEST(SelectModelFiles, PicksShardsAndTokenizerFilesWithConfigLast) {
  std::vector<std::string> files = {"config.json",
                                    "model-00002-of-00002.safetensors",
                                    "vocab.txt",
                                    "model-00001-of-00002.safetensors",
                                    "model.safetensors.index.json",
                                    "pytorch_model.bin",
                                    "tf_model.h5",
                                    "onnx/model.onnx",
                                    "tokenizer.json"};
  std::vector<std::string> expected = {"tokenizer.json",
                                       "vocab.txt",
                                       "model.safetensors.index.json",
                                       "model-00001-of-00002.safetensors",
                                       "model-00002-of-00002.safetensors",
                                       "config.json"};
  EXPECT_EQ(select_model_files("o/m", files), expected);
}

TEST(SelectModelFiles, PytorchOnlyRepoExplainsTheConversion) {
  try {
    select_model_files("o/m", {"config.json", "pytorch_model.bin", "vocab.txt"});
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("save_pretrained"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("safe_serialization=True"), std::string::npos);
  }
  EXPECT_THROW(select_model_files("o/m", {"model.safetensors"}), ModelError);  // no config.json
}

TEST(DownloadProgressTest, FractionAndFormatting) {
  DownloadProgress p;
  p.file = "model.safetensors";
  p.file_index = 2;
  p.file_count = 4;
  p.file_done = 250000000;
  p.file_total = 500000000;
  p.bytes_per_second = 12.5e6;
  EXPECT_DOUBLE_EQ(p.fraction(), (1 + 0.5) / 4);  // sizes unknown overall: by files
  p.done = 300000000;
  p.total = 600000000;
  EXPECT_DOUBLE_EQ(p.fraction(), 0.5);
  EXPECT_EQ(format_download_progress(p),
            "[2/4] model.safetensors  250.0 MB / 500.0 MB   50%  12.5 MB/s");
  double fraction = -1;
  std::string what;
  download_progress_adapter([&](double f, const std::string& w) {
    fraction = f;
    what = w;
  })(p);
  EXPECT_DOUBLE_EQ(fraction, 0.5);
  EXPECT_EQ(what, format_download_progress(p));
  EXPECT_FALSE(download_progress_adapter({}));
}

// issue 23, class 1: a listing of 50,000 weight shards cost ~15 s of CPU (a search of the listing
// per file) before the first request, and every shard was then asked for.
TEST_F(DownloadTest, TensOfThousandsOfShardsAreRefusedAtOnce) {
  FixtureHttpServer other;
  nlohmann::json siblings = nlohmann::json::array(
      {{{"rfilename", "config.json"}}, {{"rfilename", "model.safetensors.index.json"}}});
  const int shards = 50000;
  for (int i = 1; i <= shards; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", i, shards);
    siblings.push_back({{"rfilename", name}, {"size", 100}});
  }
  other.serve("/api/models/" + kRepo + "/revision/main",
              nlohmann::json{{"sha", kSha}, {"siblings", siblings}}.dump());
  request.endpoint = other.endpoint();
  const auto start = std::chrono::steady_clock::now();
  try {
    download_model(request);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("lists 50000 weight shards, more than the 4096"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The old search of the listing per file took ~15 s here; a generous bound for a busy machine.
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(other.requests().size(), 1u) << "fetched files of a refused listing";
}

TEST_F(DownloadTest, ShardsOfAHugeListingAreSelectedInOrder) {
  std::vector<std::string> listing = {"config.json", "model.safetensors.index.json"};
  for (int i = 0; i < 50000; ++i) listing.push_back("other/file-" + std::to_string(i) + ".txt");
  for (std::size_t i = 1; i <= kMaxWeightShards; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i, kMaxWeightShards);
    listing.push_back(name);
  }
  listing.push_back("model-1-of-x.safetensors");  // not a shard name
  const std::vector<std::string> files = select_model_files(kRepo, listing);
  ASSERT_EQ(files.size(), kMaxWeightShards + 2);
  EXPECT_EQ(files[1], "model-00001-of-04096.safetensors");
  EXPECT_EQ(files.back(), "config.json");
}

// issue 23, class 1: a server that drips its bytes never trips the stall time-out for long, and
// each stall started the wait again (81 s for one file): the whole download has a deadline.
TEST_F(DownloadTest, DrippingServerStopsAtTheOverallDeadlineKeepingWhatArrived) {
  request.deadline_s = 2.5;
  bool dripping = false;
  const auto start = std::chrono::steady_clock::now();
  try {
    download_model(request, [&](const DownloadProgress& p) {
      if (p.file == "model.safetensors" && !dripping) {  // the listing and small files go fast
        dripping = true;
        server.throttle(2000, std::chrono::milliseconds(100));  // 20 kB/s: 15 s for the weights
      }
    });
    FAIL() << "expected DownloadError";
  } catch (const DownloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("did not finish within its 2.5 s deadline"), std::string::npos) << msg;
    EXPECT_NE(msg.find("run it again to resume"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 8.0);
  EXPECT_TRUE(dripping);
  const fs::path part = weights_part();
  ASSERT_TRUE(fs::exists(part));
  EXPECT_GT(fs::file_size(part), 0u);
  EXPECT_FALSE(fs::exists(snapshot() / "config.json"));
  server.throttle(0, std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace attnscope

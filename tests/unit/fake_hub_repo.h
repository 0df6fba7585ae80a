#pragma once
// A fake hub repo for the download tests, served by FixtureHttpServer with the headers the real hub
// sends on a file's resolve/ URL (what huggingface_hub's get_hf_file_metadata reads):
//   every file:  X-Repo-Commit: <commit>
//   LFS files:   X-Linked-Etag: "<sha256 of the content>", X-Linked-Size: <bytes>, and an ETag of
//                their pointer file
//   the others:  ETag: "<git blob id>" (W/"…" for merges.txt, as a weak ETag may come)
// and the revision API's listing with sizes, lfs.sha256 and blobId.
#include <map>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/sha256.h"
#include "tests/unit/fixture_http_server.h"

namespace attnscope::testing {

inline const std::string kRepo = "test-org/tiny-gpt2";
inline const std::string kRepoFolder = "models--test-org--tiny-gpt2";
inline const std::string kSha = "0123456789abcdef0123456789abcdef01234567";

inline std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen() & 0xff);
  return s;
}

// 40 hex digits named like a git blob id (git's is a SHA-1 of "blob <size>\0<content>"; the fake
// hub only needs a name of that shape that differs per content).
inline std::string git_blob_id(const std::string& content) {
  return sha256_hex("blob " + std::to_string(content.size()) + std::string(1, '\0') + content)
      .substr(0, 40);
}

inline bool is_lfs_name(const std::string& name) {
  return name.ends_with(".safetensors") || name.ends_with(".bin");
}

struct FakeRepo {
  std::string sha = kSha;
  std::string revision = "main";
  std::map<std::string, std::string> files = {
      {"config.json", R"({"model_type": "gpt2", "n_layer": 2, "n_head": 2})"},
      {"model.safetensors", random_bytes(300000, 1)},
      {"vocab.json", R"({"a": 0, "b": 1})"},
      {"merges.txt", "#version: 0.2\na b\n"},
      {"pytorch_model.bin", random_bytes(1000, 2)},  // must not be fetched
      {"README.md", "# tiny\n"},                     // must not be fetched
  };
  nlohmann::json config = {{"model_type", "gpt2"}, {"architectures", {"GPT2LMHeadModel"}}};

  // The name huggingface_hub gives the file's blob: the SHA-256 of an LFS file, else the git id.
  std::string etag(const std::string& name) const {
    const std::string& body = files.at(name);
    return is_lfs_name(name) ? sha256_hex(body) : git_blob_id(body);
  }
  std::string path(const std::string& name) const {
    return "/" + kRepo + "/resolve/" + sha + "/" + name;
  }
  std::string weights_path() const { return path("model.safetensors"); }
  std::string headers(const std::string& name) const {
    const std::string& body = files.at(name);
    std::string h = "X-Repo-Commit: " + sha + "\r\n";
    if (is_lfs_name(name)) {
      const std::string pointer =
          "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha256_hex(body) + "\nsize " +
          std::to_string(body.size()) + "\n";
      h += "ETag: \"" + git_blob_id(pointer) + "\"\r\nX-Linked-Etag: \"" + sha256_hex(body) +
           "\"\r\nX-Linked-Size: " + std::to_string(body.size()) + "\r\n";
    } else if (name == "merges.txt") {
      h += "ETag: W/\"" + git_blob_id(body) + "\"\r\n";
    } else {
      h += "ETag: \"" + git_blob_id(body) + "\"\r\n";
    }
    return h;
  }

  void install(FixtureHttpServer& server) const {
    nlohmann::json siblings = nlohmann::json::array();
    for (const auto& [name, body] : files) {
      nlohmann::json entry = {
          {"rfilename", name}, {"size", body.size()}, {"blobId", git_blob_id(body)}};
      if (is_lfs_name(name))  // LFS files, as on the hub
        entry["lfs"] = {{"sha256", sha256_hex(body)}, {"size", body.size()}, {"pointerSize", 134}};
      siblings.push_back(entry);
      server.serve(path(name), body);
      server.headers(path(name), headers(name));
    }
    nlohmann::json api = {{"id", kRepo}, {"sha", sha}, {"siblings", siblings}, {"config", config}};
    server.serve("/api/models/" + kRepo + "/revision/" + revision, api.dump());
  }
};

// The GET requests for `path` (HEADs left out: they ask for a file's ETag, not its bytes).
inline std::vector<FixtureHttpServer::Request> gets_for(const FixtureHttpServer& server,
                                                        const std::string& path) {
  std::vector<FixtureHttpServer::Request> out;
  for (const auto& r : server.requests_for(path))
    if (r.method == "GET") out.push_back(r);
  return out;
}

}  // namespace attnscope::testing

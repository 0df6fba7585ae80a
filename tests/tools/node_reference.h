#pragma once
// Runs a node reference script from tests/tools over a list of strings and reads its JSON answer.
// Used by the tokenizer tests; node v20 and scripts/fetch_test_data.sh's packages are required.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnscope::testing {

inline const std::filesystem::path kNpmData = std::filesystem::path(ATTNSCOPE_TEST_DATA) / "npm";
inline const std::filesystem::path kToolsDir =
    std::filesystem::path(ATTNSCOPE_TEST_DATA).parent_path() / "tools";

// `arguments` go between the script and the input/output files. Returns null (after a test
// failure saying why) when node or the script fails.
inline nlohmann::json run_node_reference(const std::string& script,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_ref_" + std::to_string(::getpid()) + "_" + script);
  fs::create_directories(dir);
  const fs::path in = dir / "in.json";
  const fs::path out = dir / "out.json";
  std::ofstream(in) << nlohmann::json(inputs).dump();
  std::string command = "node '" + (kToolsDir / script).string() + "'";
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  command += " '" + in.string() + "' '" + out.string() + "'";
  const int status = std::system(command.c_str());
  nlohmann::json result;
  if (status == 0) {
    std::ifstream stream(out);
    result = nlohmann::json::parse(stream);
  }
  fs::remove_all(dir);
  EXPECT_EQ(status, 0) << "the node reference failed (is node installed and "
                          "scripts/fetch_test_data.sh run?): "
                       << command;
  return result;
}

// One string as Hugging Face's tokenizers library encodes it (offsets in UTF-8 bytes).
struct HfEncoding {
  std::vector<int> ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<int, int>> offsets;
  std::vector<int> ids_with_specials;  // with the post-processor's special tokens ...
  std::vector<std::string> tokens_with_specials;
  std::vector<std::pair<int, int>> offsets_with_specials;  // ... which have (0, 0) here
};

// kind: "gpt2", "bert", "gpt2-variant" or the path of a tokenizer.json file.
inline std::vector<HfEncoding> hf_reference(const std::string& kind,
                                            const std::vector<std::string>& inputs) {
  const nlohmann::json json =
      run_node_reference("hf_tokenizers_reference.js", {kind, kNpmData.string()}, inputs);
  std::vector<HfEncoding> result;
  if (!json.is_array()) return result;
  for (const auto& item : json) {
    HfEncoding e;
    e.ids = item.at("ids").get<std::vector<int>>();
    e.tokens = item.at("tokens").get<std::vector<std::string>>();
    for (const auto& pair : item.at("offsets")) e.offsets.emplace_back(pair[0], pair[1]);
    e.ids_with_specials = item.at("ids_with_specials").get<std::vector<int>>();
    e.tokens_with_specials = item.at("tokens_with_specials").get<std::vector<std::string>>();
    for (const auto& pair : item.at("offsets_with_specials"))
      e.offsets_with_specials.emplace_back(pair[0], pair[1]);
    result.push_back(std::move(e));
  }
  return result;
}

}  // namespace attnscope::testing

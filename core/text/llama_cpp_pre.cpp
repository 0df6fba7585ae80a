#include "core/text/llama_cpp_pre.h"

#include <unordered_set>

namespace attnscope::llama_cpp {

std::optional<PreSpec> pre_spec(const std::string& pre) {
  auto any = [&](std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (pre == name) return true;
    }
    return false;
  };
  const std::vector<SplitKind> gpt2 = {SplitKind::kGpt2};
  if (pre.empty() || pre == "default") {
    return PreSpec{{SplitKind::kPunctuationRun, SplitKind::kGpt2, SplitKind::kNumberRun,
                    SplitKind::kThreeAsciiDigits}};
  }
  if (any({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
           "jina-v5-nano"})) {
    return PreSpec{{SplitKind::kLlama3}, true, true};
  }
  if (any({"dbrx", "smaug-bpe"})) return PreSpec{{SplitKind::kLlama3}};
  if (any({"glm4", "chatglm-bpe"})) return PreSpec{{SplitKind::kLlama3}, false, false, true};
  if (any({"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan",
           "solar-open", "grok-2"})) {
    return PreSpec{{SplitKind::kQwen2}};
  }
  if (any({"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
           "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo", "jais", "exaone4", "trillion",
           "granite-docling"})) {
    return PreSpec{gpt2};
  }
  if (any({"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
           "mellum2"})) {
    return PreSpec{{SplitKind::kNumber, SplitKind::kGpt2}};
  }
  if (pre == "falcon") {
    return PreSpec{{SplitKind::kPunctuationRunBq, SplitKind::kGpt2, SplitKind::kThreeAsciiDigits}};
  }
  return std::nullopt;
}

// Token texts llama.cpp's loader turns into control tokens whatever their type says (the EOG list
// of llama_vocab::impl::load, a superset of its EOT/EOM names, and the FIM names).
bool control_by_name(const std::string& text) {
  static const std::unordered_set<std::string> names = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
      "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
      "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
      "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
      "[e~[",
      // FIM prefix / suffix / middle / pad / repo / file separator
      "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "begin\xef\xbd\x9c>",
      "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", "<|fim_suffix|>",
      "<fim-suffix>", "<fim_suffix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81hole\xef\xbd\x9c>",
      "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", "<|fim_middle|>",
      "<fim-middle>", "<fim_middle>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "end\xef\xbd\x9c>",
      "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", "<|fim_pad|>", "<fim-pad>",
      "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
      "<reponame>", "<|file_sep|>"};
  return names.count(text) != 0;
}

}  // namespace attnscope::llama_cpp

#include "core/trace/trace_model.h"

#include "core/trace/trace_reader.h"

namespace attnscope {

TraceModel::TraceModel(AttentionTrace trace, std::string source, std::filesystem::path path)
    : trace_(std::make_shared<const AttentionTrace>(std::move(trace))),
      source_(std::move(source)),
      path_(std::move(path)) {}

AttentionTrace TraceModel::run(const std::string& text, Backend&) const {
  if (text != trace_->text)
    throw Error("this is a stored trace (" + source_ +
                "): it shows its own text only; open a model to compute new text");
  AttentionTrace copy = *trace_;
  copy.compute_ms = 0.0;
  return copy;
}

AttentionTrace TraceModel::run_translation(const std::string& source,
                                           const std::optional<std::string>& target,
                                           Backend& backend, int max_new_tokens) const {
  (void)max_new_tokens;
  if (target && !target->empty())
    throw Error("this is a stored trace (" + source_ +
                "): it shows its own translation only; open a model to translate another target");
  return run(source, backend);
}

std::shared_ptr<const TraceModel> open_trace_model(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return std::make_shared<const TraceModel>(read_trace_file(path), path.filename().string(),
                                            ec ? path : absolute.lexically_normal());
}

}  // namespace attnscope

#include "core/trace/trace_model.h"

#include "core/trace/trace_reader.h"

namespace attnscope {

TraceModel::TraceModel(AttentionTrace trace, std::string source)
    : trace_(std::make_shared<const AttentionTrace>(std::move(trace))),
      source_(std::move(source)) {}

AttentionTrace TraceModel::run(const std::string& text, Backend&) const {
  if (text != trace_->text)
    throw Error("this is a stored trace (" + source_ +
                "): it shows its own text only; open a model to compute new text");
  AttentionTrace copy = *trace_;
  copy.compute_ms = 0.0;
  return copy;
}

std::shared_ptr<const TraceModel> open_trace_model(const std::filesystem::path& path) {
  return std::make_shared<const TraceModel>(read_trace_file(path), path.filename().string());
}

}  // namespace attnscope

#pragma once
// A stored trace as a Model (`attnscope view FILE`): every view reads AttentionTrace only, so a
// trace computed elsewhere (transformers on a GPU cluster, an earlier export) is shown by the same
// views without any model. Its text cannot change: running it on other text is an error that
// says so, and the views keep showing the stored trace.
#include <filesystem>
#include <memory>

#include "core/model/model.h"

namespace attnscope {

class TraceModel final : public Model {
 public:
  TraceModel(AttentionTrace trace, std::string source);
  ModelInfo info() const override { return trace_->model; }
  Tokens tokenize(const std::string&) const override { return trace_->tokens; }
  AttentionTrace run(const std::string& text, Backend& backend) const override;

  const AttentionTrace& trace() const { return *trace_; }
  const std::string& source() const { return source_; }  // the file it came from

 private:
  std::shared_ptr<const AttentionTrace> trace_;
  std::string source_;
};

// Reads and validates the file (trace_reader.h); throws TraceError.
std::shared_ptr<const TraceModel> open_trace_model(const std::filesystem::path& path);

}  // namespace attnscope

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
  TraceModel(AttentionTrace trace, std::string source, std::filesystem::path path = {});
  ModelInfo info() const override { return trace_->model; }
  Tokens tokenize(const std::string&) const override { return trace_->tokens; }
  AttentionTrace run(const std::string& text, Backend& backend) const override;
  // A stored encoder–decoder trace: its own translation (no target, or the one it holds).
  AttentionTrace run_translation(const std::string& source,
                                 const std::optional<std::string>& target, Backend& backend,
                                 int max_new_tokens = 64) const override;

  const AttentionTrace& trace() const { return *trace_; }
  const std::string& source() const { return source_; }  // the file it came from
  // Where that file is (absolute; empty when the trace did not come from a file): sessions save it.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::shared_ptr<const AttentionTrace> trace_;
  std::string source_;
  std::filesystem::path path_;
};

// Reads and validates the file (trace_reader.h); throws TraceError.
std::shared_ptr<const TraceModel> open_trace_model(const std::filesystem::path& path);

}  // namespace attnscope

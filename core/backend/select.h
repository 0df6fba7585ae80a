#pragma once
// Backend selection: `auto` tries CUDA and falls back to the CPU, remembering why.
#include <memory>
#include <string>

#include "core/backend/backend.h"

namespace attnscope {

enum class BackendChoice { kAuto, kCpu, kCuda };

BackendChoice parse_backend_choice(const std::string& s);  // throws UsageError

struct SelectedBackend {
  std::shared_ptr<Backend> backend;
  // Empty when the requested backend was obtained; otherwise why we fell back to the CPU, in
  // words a user understands ("no CUDA driver found", "CUDA module not built").
  std::string fallback_reason;
};

// kCuda throws BackendError when CUDA cannot be used; kAuto falls back to the CPU.
SelectedBackend select_backend(BackendChoice choice);

// Tries to load the CUDA module and create its backend; on failure returns nullptr and sets `why`.
std::shared_ptr<Backend> try_cuda_backend(std::string& why);

}  // namespace attnscope

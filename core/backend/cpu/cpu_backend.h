#pragma once
#include <memory>

#include "core/backend/backend.h"

namespace attnscope {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace attnscope

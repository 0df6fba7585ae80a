// The interventions (zero and mean ablation, edge knockouts), the logit lens, head effects, direct
// logit attribution and run_intervened's weights on CUDA against the CPU, for every decoder
// fixture, the built-in tiny model and the built-in stories260K (assets/stories260K). Cases,
// tolerances and tests: tests/common/probe_equivalence.h, shared with the opengl test. Skipped
// (never passed) where no CUDA device exists.
#include "tests/common/probe_equivalence.h"
#include "core/backend/select.h"

namespace attnscope::test {

BackendUnderTest backend_under_test() {
  std::string why;
  std::shared_ptr<Backend> cuda = try_cuda_backend(why);
  return {cuda, "no CUDA device: " + why, true};
}

INSTANTIATE_TEST_SUITE_P(Cuda, ProbeEquivalence, ::testing::ValuesIn(probe_models()),
                         probe_test_name);

}  // namespace attnscope::test

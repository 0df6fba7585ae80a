// The interventions (zero and mean ablation, edge knockouts), the logit lens, head effects, direct
// logit attribution and run_intervened's weights on the opengl backend against the CPU, for every
// decoder fixture, the built-in tiny model and the built-in stories260K (assets/stories260K).
// Cases, tolerances and tests: tests/common/probe_equivalence.h, shared with the CUDA test. Runs in
// CI on llvmpipe; a missing OpenGL fails, never skips.
#include "core/backend/select.h"
#include "tests/common/probe_equivalence.h"

namespace attnscope::test {

BackendUnderTest backend_under_test() {
  const OpenGlProbe gl = try_opengl_backend();
  return {gl.backend, "the opengl backend does not work here: " + gl.why, false};
}

INSTANTIATE_TEST_SUITE_P(OpenGl, ProbeEquivalence, ::testing::ValuesIn(probe_models()),
                         probe_test_name);

}  // namespace attnscope::test

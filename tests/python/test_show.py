"""attnscope.trace_model / show for a transformers-like model: the tokens (ids, byte offsets,
special) and attention it sends must be what attnscope's own C++ run of the same fixture model
gives (`attnscope export`), and a model loaded with SDPA is switched to eager for the call."""
import json
import os
import sys
import warnings

import numpy as np

from pytest_common import FIXTURES, SKIP, TempDirCase, have_torch, main, run

if not have_torch():
    print("SKIPPED: python3-torch is not installed")
    sys.exit(SKIP)

import attnscope  # noqa: E402
from standins import Model, Tokenizer  # noqa: E402


class TraceModel(TempDirCase):
    def compare(self, fixture, text, **model_args):
        folder = os.path.join(FIXTURES, fixture)
        if not os.path.isdir(folder):
            self.fail(f"no fixture {folder}: build the fixture_models target")
        model, tok = Model(folder, **model_args), Tokenizer(folder)
        trace = attnscope.trace_model(model, tok, text)
        ref = json.loads(run(["export", "--model", folder, "--text", text, "-o", "-"]).stdout)
        keys = ("id", "start", "end", "special")
        self.assertEqual([{k: t[k] for k in keys} for t in trace.tokens],
                         [{k: t[k] for k in keys} for t in ref["tokens"]])
        self.assertEqual(trace.meta["text"], text)
        self.assertEqual(trace.meta["model"]["kind"], ref["model"]["kind"])
        want = np.asarray(ref["attention"], dtype=np.float64)
        got = trace.arrays["attention"].astype(np.float64)
        self.assertEqual(got.shape, want.shape)
        diff = float(np.abs(got - want).max())
        print(f"{fixture}: max |python - C++| attention = {diff:.3g} over {got.size} weights")
        self.assertLess(diff, 1e-4)
        # The file it makes opens in attnscope with those tokens.
        path = attnscope.save_trace(trace, self.path("show.safetensors"))
        svg = run(["render", "--trace", path, "-o", "-"]).stdout
        self.assertIn(b"<svg", svg)
        return model, tok, trace

    def test_gpt2_byte_level_with_non_ascii(self):
        _, tok, trace = self.compare("gpt2-tiny-f32", "The café sat on the mat.")
        self.assertTrue(tok.calls[0]["return_offsets_mapping"])
        self.assertEqual(trace.tokens[1]["text"], "ĠcafÃ©")

    def test_bert_special_tokens(self):
        _, _, trace = self.compare("bert-tiny-uncased-f32", "The café sat on the mat.")
        self.assertEqual([t["special"] for t in trace.tokens][:2], [True, False])
        self.assertEqual(trace.tokens[-1]["text"], "[SEP]")

    def test_sdpa_is_switched_to_eager_with_a_warning(self):
        folder = os.path.join(FIXTURES, "gpt2-tiny-f32")
        model = Model(folder, attn_implementation="sdpa")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = attnscope.trace_model(model, Tokenizer(folder), "The cat sat on the mat.")
        self.assertEqual(model.seen_implementations, ["eager"])
        self.assertEqual(model.config._attn_implementation, "sdpa")  # put back
        self.assertTrue(any("eager" in str(w.message) for w in caught), caught)
        self.assertEqual(trace.arrays["attention"].shape[2], 7)

    def test_no_weights_is_a_clear_error(self):
        folder = os.path.join(FIXTURES, "gpt2-tiny-f32")
        model = Model(folder, attn_implementation="eager")
        model.config._attn_implementation = "custom"  # not one we know to switch
        with self.assertRaises(ValueError) as ctx:
            attnscope.trace_model(model, Tokenizer(folder), "The cat sat on the mat.")
        self.assertIn("attn_implementation=\"eager\"", str(ctx.exception))


if __name__ == "__main__":
    main()

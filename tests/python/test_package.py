"""The attnscope package without a window: BertViz-style arguments checked with clear messages,
trace files (JSON and safetensors) that the C++ reader accepts with the same numbers, render()
returning figures through `attnscope render -o -`.

The numbers the C++ read are compared through `attnscope heads --trace FILE --json` against the
same statistics computed here in numpy from the arrays passed in (first-token mass, diagonal,
previous-token score, entropy, mean distance: every row's weights enter them)."""
import json
import sys
import xml.etree.ElementTree as ET

import numpy as np

from pytest_common import SKIP, TempDirCase, have_torch, heads_json, main, run

if not have_torch():
    print("SKIPPED: python3-torch is not installed")
    sys.exit(SKIP)
import torch  # noqa: E402

import attnscope  # noqa: E402


def stand_in_attentions(layers, heads, n, seed=0, causal=False):
    """What outputs.attentions looks like: one [1, heads, n, n] tensor of softmax rows a layer."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(layers):
        scores = torch.randn(1, heads, n, n, generator=g) * 2
        if causal:
            scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1),
                                        float("-inf"))
        out.append(torch.softmax(scores, dim=-1))
    return tuple(out)


def numpy_summaries(a):
    """[layers, heads, n, n] -> {stat: [layers, heads]} as core/analysis/head_summary.h defines
    them (every row live)."""
    a = a.astype(np.float64)
    n = a.shape[-1]
    i = np.arange(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(a > 0, a * np.log2(a), 0.0)
    return {
        "entropy": (-plogp.sum(-1)).mean(-1),
        "distance": (a * np.abs(i[:, None] - i[None, :])).sum(-1).mean(-1),
        "first": a[..., :, 0].mean(-1),
        "previous": a[..., i[1:], i[1:] - 1].mean(-1),
        "diagonal": a[..., i, i].mean(-1),
    }


class Validation(TempDirCase):
    tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]

    def check_message(self, fn, *fragments):
        with self.assertRaises(ValueError) as ctx:
            fn()
        for f in fragments:
            self.assertIn(f, str(ctx.exception))

    def test_messages(self):
        att = stand_in_attentions(2, 3, 5)
        self.check_message(lambda: attnscope.build_trace(att, self.tokens[:4]),
                           "the attention has 5 positions", "is 4")
        self.check_message(lambda: attnscope.build_trace(att, None), "'tokens' is required")
        self.check_message(lambda: attnscope.build_trace(att, "the cat"), "not one string")
        batch2 = tuple(torch.cat([a, a]) for a in att)
        self.check_message(lambda: attnscope.build_trace(batch2, self.tokens),
                           "attention[0] has a batch of 2", "expected 1")
        self.check_message(
            lambda: attnscope.build_trace([att[0], stand_in_attentions(1, 2, 5)[0]], self.tokens),
            "attention[1] has shape (1, 2, 5, 5)", "same heads")
        rect = [torch.softmax(torch.randn(1, 3, 5, 6), -1)]
        self.check_message(lambda: attnscope.build_trace(rect, self.tokens), "5 queries and 6 keys")
        self.check_message(lambda: attnscope.build_trace([torch.randn(1, 3, 5, 5)], self.tokens),
                           "attention weights lie in [0, 1]")
        halves = [torch.full((1, 3, 5, 5), 0.1)]
        self.check_message(lambda: attnscope.build_trace(halves, self.tokens), "sums to 0.5")
        self.check_message(lambda: attnscope.build_trace(att[0], self.tokens),
                           "one array of shape (1, 3, 5, 5)")
        self.check_message(lambda: attnscope.build_trace([a[0] for a in att], self.tokens),
                           "expected 4 dimensions")
        self.check_message(lambda: attnscope.build_trace([None, None], self.tokens),
                           "attn_implementation=\"eager\"")
        self.check_message(lambda: attnscope.build_trace(att, self.tokens, include_layers=[2]),
                           "'include_layers' has 2")
        self.check_message(lambda: attnscope.build_trace(att, self.tokens, sentence_b_start=5),
                           "sentence_b_start is 5")
        self.check_message(lambda: attnscope.head_view(att, self.tokens, layer=1,
                                                       include_layers=[0]),
                           "layer 1 is not in include_layers")
        self.check_message(lambda: attnscope.head_view(att, self.tokens, html_action="show"),
                           "'html_action'")
        self.check_message(lambda: attnscope.build_trace(att, self.tokens,
                                                         encoder_attention=att),
                           "may not specify any encoder-decoder")
        self.check_message(lambda: attnscope.build_trace(), "at least one attention argument")
        self.check_message(lambda: attnscope.write_trace(self.path("t.txt"), att, self.tokens),
                           "name it .json or .safetensors")

    def test_half_precision_rows_are_renormalised(self):
        # A model run in bfloat16 returns rows that sum to 1 only within ~0.4%.
        att = tuple(a.to(torch.bfloat16) for a in stand_in_attentions(2, 2, 40, seed=9))
        raw = torch.stack(att)[:, 0].double().sum(-1)
        self.assertGreater(float((raw - 1).abs().max()), 1e-3)  # the reader would refuse these
        trace = attnscope.build_trace(att, [str(i) for i in range(40)])
        got = trace.arrays["attention"].astype(np.float64)
        self.assertLess(float(np.abs(got.sum(-1) - 1).max()), 1e-6)
        self.assertLess(float(np.abs(got - torch.stack(att)[:, 0].double().numpy()).max()), 1e-2)

    def test_seq2seq_messages(self):
        enc = stand_in_attentions(2, 2, 4)
        dec = stand_in_attentions(2, 2, 3, causal=True)
        cross = tuple(torch.softmax(torch.randn(1, 2, 3, 4), -1) for _ in range(2))
        et, dt = ["a", "b", "c", "</s>"], ["<pad>", "x", "y"]
        self.check_message(lambda: attnscope.build_trace(
            encoder_attention=enc, decoder_attention=dec, encoder_tokens=et, decoder_tokens=dt),
            "'cross_attention' is required")
        self.check_message(lambda: attnscope.build_trace(
            encoder_attention=enc, decoder_attention=stand_in_attentions(2, 2, 3),
            cross_attention=cross, encoder_tokens=et, decoder_tokens=dt), "causal")
        self.check_message(lambda: attnscope.build_trace(
            encoder_attention=enc, decoder_attention=dec, cross_attention=cross,
            encoder_tokens=et[:3], decoder_tokens=dt), "'encoder_tokens' is 3")
        self.check_message(lambda: attnscope.build_trace(
            encoder_attention=enc, decoder_attention=dec,
            cross_attention=tuple(c[:, :, :, :3] for c in cross), encoder_tokens=et,
            decoder_tokens=dt), "expected 3x4")


class TraceFiles(TempDirCase):
    def test_json_and_safetensors_read_back_by_attnscope(self):
        att = stand_in_attentions(3, 4, 9, seed=1)
        tokens = ["<|endoftext|>", "The", "Ġcaf", "Ã©", "Ġsat", "Ġon", "Ġthe", "Ġmat", "."]
        want = torch.stack(att)[:, 0].numpy()
        ref = numpy_summaries(want)
        worst = 0.0
        for ext in ("json", "safetensors"):
            with self.subTest(ext=ext):
                path = attnscope.write_trace(self.path("t." + ext), att, tokens)
                back = attnscope.read_trace(path)
                np.testing.assert_array_equal(back["attention"], want)  # float32 both ways
                self.assertEqual(back["text"], "The café sat on the mat.")
                self.assertEqual([t["text"] for t in back["tokens"]], tokens)
                self.assertEqual(back["tokens"][0]["special"], True)
                self.assertEqual((back["tokens"][2]["start"], back["tokens"][3]["end"]), (3, 9))
                got = heads_json(path)
                self.assertEqual(got["model"]["layers"], 3)
                self.assertEqual(got["token_count"], 9)
                self.assertEqual(got["text"], "The café sat on the mat.")
                for row in got["heads"]:
                    for key, table in ref.items():
                        d = abs(row[key] - table[row["layer"], row["head"]])
                        worst = max(worst, d)
                        self.assertLess(d, 2e-5, (ext, key, row))
                svg = run(["render", "--trace", path, "--layer", "2", "--head", "3",
                           "-o", "-"]).stdout
                ET.fromstring(svg)
                self.assertIn("caf".encode(), svg)
        print(f"largest |C++ summary - numpy| over both formats: {worst:.3g}")

    def test_selection_and_sentence_pair(self):
        att = stand_in_attentions(4, 3, 6, seed=2)
        tokens = ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"]
        path = attnscope.write_trace(self.path("sel.safetensors"), att, tokens,
                                     include_layers=[3, 1], include_heads=[2],
                                     sentence_b_start=4)
        back = attnscope.read_trace(path)
        self.assertEqual(back["selection"], {"layers": [1, 3], "heads": [2]})
        self.assertEqual(back["meta"]["sentence_b_start"], 4)
        want = torch.stack(att)[[1, 3]][:, 0, [2]].numpy()
        np.testing.assert_array_equal(back["attention"], want)
        got = heads_json(path)
        self.assertEqual((got["model"]["layers"], got["model"]["heads"]), (2, 1))
        ref = numpy_summaries(want)
        for row in got["heads"]:
            self.assertAlmostEqual(row["diagonal"], ref["diagonal"][row["layer"], row["head"]],
                                   places=5)

    def test_numpy_input_and_model_view_return(self):
        att = [a.numpy().astype(np.float64) for a in stand_in_attentions(2, 2, 4, seed=3)]
        fig = attnscope.model_view(att, ["▁A", "▁b", "c", "</s>"], html_action="return")
        self.assertIsInstance(fig, str)
        self.assertEqual(fig._repr_svg_(), str(fig))
        ET.fromstring(fig.encode())
        fig = attnscope.head_view(att, ["▁A", "▁b", "c", "</s>"], layer=1, heads=[1],
                                  html_action="return")
        self.assertIn(b"<svg", fig.encode())

    def test_seq2seq_trace(self):
        enc = stand_in_attentions(2, 2, 4, seed=4)
        dec = stand_in_attentions(2, 2, 3, seed=5, causal=True)
        g = torch.Generator().manual_seed(6)
        cross = tuple(torch.softmax(torch.randn(1, 2, 3, 4, generator=g), -1) for _ in range(2))
        for ext in ("json", "safetensors"):
            with self.subTest(ext=ext):
                path = attnscope.write_trace(
                    self.path("s2s." + ext), encoder_attention=enc, decoder_attention=dec,
                    cross_attention=cross, encoder_tokens=["▁Hello", "▁world", "!", "</s>"],
                    decoder_tokens=["<pad>", "▁Hallo", "▁Welt"])
                back = attnscope.read_trace(path)
                np.testing.assert_array_equal(back["decoder"]["cross_attention"],
                                              torch.stack(cross)[:, 0].numpy())
                self.assertEqual(back["text"], "Hello world!")
                svg = run(["render", "--trace", path, "--view", "cross", "--layer", "1",
                           "--head", "1", "-o", "-"]).stdout
                ET.fromstring(svg)
                self.assertIn(b"Hallo", svg)

    def test_attnscope_refuses_what_python_would_not_write(self):
        # The same check on both sides: a row that does not sum to 1, written by hand.
        path = attnscope.write_trace(self.path("ok.json"), stand_in_attentions(1, 1, 3),
                                     ["a", "b", "c"])
        with open(path) as f:
            doc = json.load(f)
        doc["attention"][0][0][1] = [0.5, 0.2, 0.2]
        with open(self.path("bad.json"), "w") as f:
            json.dump(doc, f)
        done = run(["render", "--trace", self.path("bad.json"), "-o", "-"], check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(done.stdout, b"")


class Render(TempDirCase):
    def test_render_formats(self):
        att = stand_in_attentions(2, 2, 5, seed=7)
        tokens = ["The", "Ġcat", "Ġsat", "Ġdown", "."]
        svg = attnscope.render(att, tokens, view="heatmap", layer=1, head=1)
        self.assertIsInstance(svg, attnscope.SVGFigure)
        root = ET.fromstring(svg.encode())
        self.assertTrue(root.tag.endswith("svg"))
        self.assertIn("layer 1", svg)
        png = attnscope.render(att, tokens, view="lines", format="png", scale=1)
        self.assertIsInstance(png, bytes)
        self.assertTrue(png.startswith(b"\x89PNG"))
        self.assertEqual(png._repr_png_(), bytes(png))
        pdf = attnscope.render(att, tokens, view="arcs", format="pdf")
        self.assertTrue(pdf.startswith(b"%PDF-"))
        # A trace file renders the same figure as the arrays it was written from.
        path = attnscope.write_trace(self.path("r.safetensors"), att, tokens)
        self.assertEqual(attnscope.render(path, view="heatmap", layer=1, head=1), svg)
        with self.assertRaises(attnscope.RenderError) as ctx:
            attnscope.render(att, tokens, layer=7)
        self.assertIn("7", str(ctx.exception))
        with self.assertRaises(ValueError):
            attnscope.render(att, tokens, format="gif")


if __name__ == "__main__":
    main()

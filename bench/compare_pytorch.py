#!/usr/bin/python3
"""attnscope's GPT-2-small-shaped CPU forward vs PyTorch's, in the same run, same shapes, in turns.

    bench/compare_pytorch.py [--build build] [--repetitions 11] [--openblas-coretype SkylakeX]
                             [--threads N] [--decoders DIR]

Both engines get the same number of threads (--threads, default every hardware thread).

attnscope: build/bin/transformer_bench --serve (every layer's and head's attention kept, LM head for
the last position only, as the app needs); where its default kernel is AMX bf16x3, a second server
with the float kernel (ATTNSCOPE_CPU_GEMM=fp32) runs beside it. PyTorch:
tools/reference/hf_reference.py's GPT2Model (written after Hugging Face's), float32, torch.no_grad,
random weights, doing the same work: attentions returned, LM head for the last position only.
(GPT2LMHeadModel's LM head over every position adds up to n x 77 MFLOP to PyTorch's side alone; the
"all-position head" column shows that variant.)

Our machines are shared and noisy: the same binary can take 1.5x longer a minute later. So every
engine stays loaded in its own process and they take turns, one forward each per round (the order
rotates from round to round), and each ratio is taken within a round. Reported: medians of the
times, and the median over rounds of the per-round ratio attnscope / PyTorch.

With --decoders DIR (folders DIR/smollm2-135m and DIR/llama-3.2-1b, written by
`build/bin/decoder_bench make SHAPE DIR/SHAPE`): the same comparison for the decoder shapes at 64
and 512 tokens, PyTorch running tools/reference/hf_decoder_reference.py's decoder (written after
Hugging Face's modeling_llama.py) in float32 on the same weights; then attnscope's trace at 32 tokens
(the keystroke) and its generation speed (ms per token with the KV cache).

Uses Debian's python3-torch; OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for the timing run
(TOOLCHAIN.md). OpenBLAS's choice of kernels is shown (its start-up line "Core: ..."): on some
virtual machines OpenBLAS does not recognise the processor and falls back to its slow generic
"Prescott" kernels; --openblas-coretype (e.g. SkylakeX, Haswell) then gives PyTorch its proper
kernels for a fairer comparison.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIZES = (16, 64, 256)


def set_torch_threads(torch):
    """PyTorch's intra-op threads from --threads (passed to the server in the environment). Left to
    itself PyTorch takes one thread per physical core, which on our 2-vCPU machines is 1 while
    attnscope uses both hardware threads: the comparison gives both engines the same number."""
    n = int(os.environ.get("ATTNSCOPE_BENCH_THREADS", "0"))
    if n > 0:
        torch.set_num_threads(n)


def torch_serve():
    """The PyTorch server (child process): reads "N" or "N all" per line, prints milliseconds."""
    import torch
    set_torch_threads(torch)
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from hf_reference import GPT2Model
    torch.manual_seed(0)
    cfg = {"n_embd": 768, "n_positions": 1024, "vocab_size": 50257, "n_head": 12, "n_layer": 12,
           "layer_norm_epsilon": 1e-5}
    model = GPT2Model(cfg).float().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    print(f"ready PyTorch {torch.__version__}, {torch.get_num_threads()} intra-op threads", flush=True)
    with torch.no_grad():
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            n, last_only = int(words[0]), not (len(words) > 1 and words[1] == "all")
            ids = torch.tensor([[(i * 7919) % 50257 for i in range(n)]])
            t0 = time.perf_counter()
            model(ids, last_logits_only=last_only)
            print(f"{(time.perf_counter() - t0) * 1e3:.4f}", flush=True)


def torch_decoder_serve(folder):
    """The PyTorch server for a decoder folder: reads "N" per line, prints milliseconds of a float32
    forward with every layer's attention and the last position's logits."""
    import torch
    set_torch_threads(torch)
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from hf_decoder_reference import DecoderReference
    model = DecoderReference(folder, compute_dtype=torch.float32)
    vocab = model.cfg["vocab_size"]
    print(f"ready PyTorch {torch.__version__}, {torch.get_num_threads()} intra-op threads", flush=True)
    with torch.no_grad():
        for line in sys.stdin:
            if not line.strip():
                continue
            n = int(line)
            ids = [(i * 7919 + 13) % vocab for i in range(n)]
            t0 = time.perf_counter()
            model.forward(ids, last_logits_only=True)
            print(f"{(time.perf_counter() - t0) * 1e3:.4f}", flush=True)


class Engine:
    """One loaded model in its own process, answering "run N" with its milliseconds."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.stderr.seek(0)
            raise SystemExit(f"{name} did not start: {line!r} {self.stderr.read()[-2000:]}")
        self.label = line[len("ready"):].strip()

    def run(self, request):
        self.proc.stdin.write(f"{request}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def stderr_lines(self):
        self.stderr.seek(0)
        return self.stderr.read().splitlines()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def keystroke_median(build, repetitions):
    """attnscope's keystroke -> trace benchmark (tokenize + forward), from Google Benchmark."""
    import json
    exe = os.path.join(build, "bin", "transformer_bench")
    out = subprocess.run([exe, "--benchmark_filter=KeystrokeToTrace",
                          f"--benchmark_repetitions={repetitions}",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median" and not b.get("error_occurred"):
            ms = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
            return ms, int(b.get("tokens", 0))
    return None


def decoders_main(args):
    """attnscope vs PyTorch on the SmolLM2-135M and Llama-3.2-1B shapes, in turns."""
    exe = os.path.join(args.build, "bin", "decoder_bench")
    for shape in ("smollm2-135m", "llama-3.2-1b"):
        folder = os.path.join(args.decoders, shape)
        if not os.path.isdir(folder):
            print(f"{shape}: no {folder} (build/bin/decoder_bench make {shape} {folder})")
            continue
        ours = Engine("attnscope", [exe, "serve", folder])
        theirs = Engine("PyTorch", [sys.executable, os.path.abspath(__file__),
                                    "--torch-decoder-serve", folder])
        times = {}
        for n in (64, 512):
            ours.run(n), theirs.run(n)  # warm-up
            for r in range(args.repetitions):
                pair = [(ours, "attnscope"), (theirs, "PyTorch")]
                for e, name in (pair if r % 2 == 0 else pair[::-1]):
                    times.setdefault((name, n), []).append(e.run(n))
        keystroke = [ours.run(32) for _ in range(args.repetitions)]
        generation = [ours.run("gen 16") for _ in range(max(3, args.repetitions // 2))]
        theirs.close()
        ours.close()
        print(f"{shape} ({ours.label}; {theirs.label}), {args.repetitions} rounds, in turns")
        print(f"{'tokens':>6} {'attnscope ms':>13} {'PyTorch fp32 ms':>16} {'ratio':>6} {'per-round':>10}")
        for n in (64, 512):
            a, b = times[("attnscope", n)], times[("PyTorch", n)]
            ratio = statistics.median(x / y for x, y in zip(a, b))
            print(f"{n:>6} {statistics.median(a):>13.1f} {statistics.median(b):>16.1f} "
                  f"{statistics.median(a) / statistics.median(b):>6.2f} {ratio:>10.2f}")
        print(f"  keystroke -> trace, 32 tokens: {statistics.median(keystroke):.1f} ms")
        print(f"  generation (KV cache, after a 32-token prompt): "
              f"{statistics.median(generation):.1f} ms per token")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repetitions", type=int, default=11, help="rounds per size")
    ap.add_argument("--openblas-coretype", default="",
                    help="OPENBLAS_CORETYPE for PyTorch's run (default: unset, OpenBLAS detects)")
    ap.add_argument("--decoders", default="",
                    help="folder with decoder_bench's smollm2-135m and llama-3.2-1b models")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for each engine: attnscope's ATTNSCOPE_THREADS and PyTorch's "
                         "intra-op threads (default: every hardware thread, as the app uses)")
    ap.add_argument("--torch-serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-decoder-serve", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["ATTNSCOPE_BENCH_THREADS"] = str(args.threads)
    os.environ["ATTNSCOPE_THREADS"] = str(args.threads)
    if args.torch_serve:
        torch_serve()
        return
    if args.torch_decoder_serve:
        torch_decoder_serve(args.torch_decoder_serve)
        return
    if args.decoders:
        for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            os.environ.pop(var, None)
        decoders_main(args)
        return

    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(var, None)
    exe = os.path.join(args.build, "bin", "transformer_bench")
    ours = Engine("attnscope", [exe, "--serve"])
    engines = [ours]
    if "bf16x3" in ours.label:
        engines.append(Engine("float kernel", [exe, "--serve", "--float-kernel"]))
    torch_env = dict(os.environ, OPENBLAS_VERBOSE="2")
    if args.openblas_coretype:
        torch_env["OPENBLAS_CORETYPE"] = args.openblas_coretype
    torch_engine = Engine("PyTorch", [sys.executable, os.path.abspath(__file__), "--torch-serve"],
                          torch_env)
    engines.append(torch_engine)
    core = next((l.split(":", 1)[1].strip() for l in torch_engine.stderr_lines()
                 if l.startswith("Core:")), "unknown")

    times = {(e.name, n): [] for e in engines for n in SIZES}
    all_head = {n: [] for n in SIZES}
    for n in SIZES:
        for e in engines:
            e.run(n)  # warm-up
        torch_engine.run(f"{n} all")
        for r in range(args.repetitions):
            order = engines[r % len(engines):] + engines[:r % len(engines)]
            for e in order:
                times[(e.name, n)].append(e.run(n))
            all_head[n].append(torch_engine.run(f"{n} all"))
    for e in engines:
        e.close()
    keystroke = keystroke_median(args.build, args.repetitions)

    def med(name, n):
        return statistics.median(times[(name, n)])

    def round_ratio(name, n):  # median over rounds of the ratio measured within the round
        return statistics.median(a / b for a, b in zip(times[(name, n)], times[("PyTorch", n)]))

    print(f"GPT-2 small forward on the CPU: {args.repetitions} rounds per size, engines in turns")
    for e in engines:
        print(f"  {e.name}: {e.label}")
    print(f"  PyTorch's OpenBLAS kernels: '{core}'")
    header = f"{'tokens':>6} {'attnscope ms':>13} {'PyTorch ms':>11} {'ratio':>6} {'per-round':>10}"
    has_float = len(engines) == 3
    if has_float:
        header += f" {'float-kernel ms':>16} {'ratio':>6} {'per-round':>10}"
    header += f" {'PyTorch, all-position head ms':>30}"
    print(header)
    for n in SIZES:
        theirs = med("PyTorch", n)
        line = (f"{n:>6} {med('attnscope', n):>13.1f} {theirs:>11.1f} "
                f"{med('attnscope', n) / theirs:>6.2f} {round_ratio('attnscope', n):>10.2f}")
        if has_float:
            f = med("float kernel", n)
            line += f" {f:>16.1f} {f / theirs:>6.2f} {round_ratio('float kernel', n):>10.2f}"
        line += f" {statistics.median(all_head[n]):>30.1f}"
        print(line)
    print("  ratio: of the medians; per-round: median of attnscope / PyTorch within each round")
    if keystroke:
        print(f"keystroke -> trace (tokenize + forward, {keystroke[1]} tokens): {keystroke[0]:.1f} ms")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""attnscope's GPT-2-small-shaped CPU forward vs PyTorch's, in the same run, same shapes.

    bench/compare_pytorch.py [--build build] [--repetitions 7]

attnscope: build/bin/transformer_bench (every layer's and head's attention kept, LM head for the
last position only, as the app needs); where the default kernel is AMX bf16x3, the float kernel
(ATTNSCOPE_CPU_GEMM=fp32) is shown beside it. PyTorch: tools/reference/hf_reference.py's GPT2Model (written
after Hugging Face's), float32, torch.no_grad, random weights, doing the same work: attentions
returned, LM head for the last position only. (GPT2LMHeadModel's LM head over every position would
add up to n x 77 MFLOP to PyTorch's side alone; the "all-position head" column shows that variant
for reference.) Medians of the repetitions; ratio = attnscope / PyTorch (same work).
Uses Debian's python3-torch; OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for the timing run
(TOOLCHAIN.md). PyTorch runs in a child process so OpenBLAS's choice of kernels can be shown (its
start-up line "Core: ..."): on some virtual machines OpenBLAS does not recognise the processor and
falls back to its slow generic "Prescott" kernels; --openblas-coretype (e.g. SkylakeX, Haswell)
then gives PyTorch its proper kernels for a fairer comparison.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIZES = (16, 64, 256)


def attnscope_medians(build, repetitions):
    exe = os.path.join(build, "bin", "transformer_bench")
    out = subprocess.run([exe, f"--benchmark_repetitions={repetitions}",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True, env=os.environ).stdout
    medians, label = {}, ""
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median" or b.get("error_occurred"):
            continue
        ms = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        name = b["run_name"]
        if name.startswith("BM_Gpt2SmallForward/"):
            medians[int(name.split("/")[1])] = ms
            label = b.get("label", label)
        elif name.startswith("BM_Gpt2SmallForwardFloatKernel/"):
            medians[("float", int(name.split("/")[1]))] = ms
        elif name.startswith("BM_Gpt2SmallKeystrokeToTrace"):
            medians["keystroke"] = (ms, int(b.get("tokens", 0)))
    return medians, label


def pytorch_medians(repetitions):
    """Runs in the child process (--torch-only)."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from hf_reference import GPT2Model
    torch.manual_seed(0)
    cfg = {"n_embd": 768, "n_positions": 1024, "vocab_size": 50257, "n_head": 12, "n_layer": 12,
           "layer_norm_epsilon": 1e-5}
    model = GPT2Model(cfg).float().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    medians, all_head = {}, {}
    with torch.no_grad():
        for n in SIZES:
            ids = torch.tensor([[(i * 7919) % 50257 for i in range(n)]])
            for last_only, into in ((True, medians), (False, all_head)):
                model(ids, last_logits_only=last_only)  # warm-up
                times = []
                for _ in range(repetitions):
                    t0 = time.perf_counter()
                    hidden, logits, attentions = model(ids, last_logits_only=last_only)
                    times.append((time.perf_counter() - t0) * 1e3)
                into[n] = statistics.median(times)
    return {"medians": medians, "all_head": all_head, "version": torch.__version__,
            "threads": torch.get_num_threads()}


def pytorch_in_child(repetitions, coretype):
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    run = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-only",
                          f"--repetitions={repetitions}"], check=True, capture_output=True, text=True,
                         env=env)
    core = next((l.split(":", 1)[1].strip() for l in run.stderr.splitlines() if l.startswith("Core:")),
                "unknown")
    result = json.loads(run.stdout)
    for key in ("medians", "all_head"):
        result[key] = {int(k): v for k, v in result[key].items()}
    result["core"] = core
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--openblas-coretype", default="",
                    help="OPENBLAS_CORETYPE for PyTorch's run (default: unset, OpenBLAS detects)")
    ap.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_only:
        print(json.dumps(pytorch_medians(args.repetitions)))
        return

    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(var, None)
    ours, label = attnscope_medians(args.build, args.repetitions)
    torch_run = pytorch_in_child(args.repetitions, args.openblas_coretype)
    theirs = torch_run["medians"]
    print(f"GPT-2 small forward on the CPU, median of {args.repetitions} runs")
    print(f"  attnscope: {label}")
    print(f"  PyTorch {torch_run['version']}: {torch_run['threads']} intra-op threads, "
          f"OpenBLAS kernels '{torch_run['core']}'")
    floats = any(isinstance(k, tuple) for k in ours)
    extra = f" {'float-kernel ms':>16} {'ratio':>7}" if floats else ""
    print(f"{'tokens':>8} {'attnscope ms':>14} {'PyTorch ms':>12} {'ratio':>7} "
          f"{'PyTorch, all-position head ms':>31}{extra}")
    for n in SIZES:
        if n in ours:
            line = (f"{n:>8} {ours[n]:>14.1f} {theirs[n]:>12.1f} {ours[n] / theirs[n]:>7.2f} "
                    f"{torch_run['all_head'][n]:>31.1f}")
            if ("float", n) in ours:
                f = ours[("float", n)]
                line += f" {f:>16.1f} {f / theirs[n]:>7.2f}"
            print(line)
    if floats:
        print("  float-kernel: attnscope with ATTNSCOPE_CPU_GEMM=fp32 (no AMX bf16x3), same run")
    if "keystroke" in ours:
        ms, tokens = ours["keystroke"]
        print(f"keystroke -> trace (tokenize + forward, {tokens} tokens): {ms:.1f} ms")


if __name__ == "__main__":
    main()

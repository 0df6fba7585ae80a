#!/usr/bin/env python3
"""Vocab-only GGUFs for the tokenizer comparison with llama.cpp (llama_cpp_tokenizer_test), beside
the five that tools/gguf/make_gguf_fixtures.py writes (llama3, qwen3, gemma3, mistral, gpt2):

    vocab-gpt2-smollm.gguf     GPT-2's vocabulary with pre "smollm" (\\p{N} split, then GPT-2's)
    vocab-gpt2-default.gguf    pre "default" (llama.cpp's four-regex fallback)
    vocab-gpt2-falcon.gguf     pre "falcon"
    vocab-gpt2-starcoder.gguf  pre "starcoder" (the smollm list under another name)
    vocab-gpt2-llama-bpe.gguf  pre "llama-bpe" on GPT-2's merges (ignore_merges, BOS)
    vocab-gpt2-stablelm2.gguf  pre "stablelm2" (Qwen2's matcher)
    vocab-stories260K.gguf     the real 512-piece SentencePiece-style vocabulary of stories260K
    vocab-phi3.gguf            Mistral's pieces with Phi-3 mini's added tokens, named "...phi3":
                               llama.cpp then strips the white space after special tokens

Written with tools/gguf's writer and vocabulary conventions (gguf_vocab.build_vocab).

    /usr/bin/python3 tests/tools/llama_cpp/make_tokenizer_vocabs.py --npm tests/data/npm \
        --stories assets/stories260K --out build/fixtures/gguf_tokenizer
"""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "tools", "gguf"))

import gguf_vocab as gv  # noqa: E402
import make_gguf_fixtures as mf  # noqa: E402

GPT2_PRES = ["smollm", "default", "falcon", "starcoder", "llama-bpe", "stablelm2"]


def hparams(like, n_tokens):
    fx = next(f for f in mf.FIXTURES if f["name"] == like)
    return [(k, m, n_tokens if k.endswith(".vocab_size") else v) for k, m, v in mf.arch_hparams(fx)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--npm", required=True)
    p.add_argument("--stories", required=True, help="the stories260K folder (tokenizer.json)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tok, cfg, _, _ = mf.load_tokenizer(a.npm, "gpt2")
    for pre in GPT2_PRES:
        vocab = gv.build_vocab(tok, cfg, pre=pre, add_bos=False)
        path = os.path.join(a.out, f"vocab-gpt2-{pre}.gguf")
        gv.write_vocab_only(path, "gpt2", vocab, hparams("gpt2", len(vocab["tokens"])),
                            name=f"attnscope-vocab-gpt2-{pre}")
    stok = gv.load_json(os.path.join(a.stories, "tokenizer.json"))
    scfg = gv.load_json(os.path.join(a.stories, "tokenizer_config.json"))
    vocab = gv.build_vocab(stok, scfg)
    gv.write_vocab_only(os.path.join(a.out, "vocab-stories260K.gguf"), "llama", vocab,
                        hparams("llama-spm", len(vocab["tokens"])), name="attnscope-vocab-stories260K")
    tok, cfg, pre, add_bos = mf.load_tokenizer(a.npm, "mistral")
    phi3 = next(f for f in mf.FIXTURES if f["name"] == "phi3")
    for content in phi3["extra_added"]:
        new_id = max([t["id"] for t in tok["added_tokens"]] + list(tok["model"]["vocab"].values())) + 1
        tok["added_tokens"].append({"id": new_id, "content": content, "single_word": False,
                                    "lstrip": False, "rstrip": True, "normalized": False,
                                    "special": True})
    cfg = dict(cfg, **phi3["tokenizer_config"])
    vocab = gv.build_vocab(tok, cfg, pre=pre, add_bos=add_bos)
    gv.write_vocab_only(os.path.join(a.out, "vocab-phi3.gguf"), "phi3", vocab,
                        hparams("phi3", len(vocab["tokens"])), name="attnscope-vocab-phi3")
    print(f"tokenizer vocabularies written to {a.out}")


if __name__ == "__main__":
    main()

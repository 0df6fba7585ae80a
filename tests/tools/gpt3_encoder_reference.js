// Independent reference for the GPT-2 BPE tests: encodes each string of a JSON array with
// gpt-3-encoder's Encoder.js (a JavaScript port of OpenAI's encoder.py) and writes the id arrays.
// usage: node gpt3_encoder_reference.js ENCODER_JS INPUT_JSON OUTPUT_JSON
const fs = require('fs');
const [encoderJs, inputPath, outputPath] = process.argv.slice(2);
const { encode } = require(encoderJs);
const inputs = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
fs.writeFileSync(outputPath, JSON.stringify(inputs.map((text) => encode(text))));

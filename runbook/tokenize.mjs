// Encodes texts with the pinned llama3-tokenizer-js, the same file the page carries, so the
// figures the build prints about tokens come from the tokenizer the reader runs.
//
//     node runbook/tokenize.mjs BUNDLE.js < {"name": "text", ...} > {"name": {"ids": [...], "pieces": [[bytes]...]}}
//
// Special tokens written in a text (<|eot_id|>) become their ids, as in the model's own tokenizer.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const { default: tokenizer } = await import(pathToFileURL(process.argv[2]).href);

// GPT-2's byte-level alphabet: each byte is written as one printable character in the vocabulary.
const BYTE_OF = new Map();
{
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    BYTE_OF.set(String.fromCharCode(printable.includes(b) ? b : 256 + extra++), b);
  }
}

const encoder = new TextEncoder();
function pieceBytes(id) {
  const piece = tokenizer.vocabById[id];
  if (id >= 128000) return Array.from(encoder.encode(piece));
  return Array.from(piece, (ch) => BYTE_OF.get(ch));
}

const texts = JSON.parse(readFileSync(0, "utf-8"));
const out = {};
for (const [name, text] of Object.entries(texts)) {
  const ids = tokenizer.encode(text, { bos: false, eos: false });
  out[name] = { ids, pieces: ids.map(pieceBytes) };
}
process.stdout.write(JSON.stringify(out));

// Lower bounds for the bench (scripts/bench.mjs): what any Node program pays to read an iptables-save dump, with no
// analysis at all, so the `svc/NAME --from` figures can be judged against what the runtime allows on this machine.
//
// Usage: node bench/floor.mjs read|lines|chains DUMP
//   read    read the whole dump into one string (what an analysis needs to quote rules), print its length
//   lines   that, and find every line (indexOf "\n"), print the count
//   chains  that, and index the chains: the first offset of each chain's rules, as a parser must to follow jumps
//           (each `-A NAME` line is compared with the previous one in place; a Map entry per chain)
// Prints one number; exits 1 on bad usage. Plain JavaScript, no imports beyond node:fs.
import { readFileSync } from "node:fs";

const [mode, path] = process.argv.slice(2);
if (!["read", "lines", "chains"].includes(mode ?? "") || !path) {
  process.stderr.write("usage: node bench/floor.mjs read|lines|chains DUMP\n");
  process.exit(1);
}
// Dumps are ASCII: latin1 makes the string with one copy (the CLI reads them the same way).
const text = readFileSync(path).toString("latin1");
if (mode === "read") {
  process.stdout.write(`${text.length}\n`);
} else if (mode === "lines") {
  let n = 0;
  for (let p = 0; p < text.length;) {
    const q = text.indexOf("\n", p);
    n++;
    if (q === -1) break;
    p = q + 1;
  }
  process.stdout.write(`${n}\n`);
} else {
  const first = new Map();
  let current = "";
  for (let p = 0; p < text.length;) {
    let q = text.indexOf("\n", p);
    if (q === -1) q = text.length;
    if (text.startsWith("-A ", p) && !(text.charCodeAt(p + 3 + current.length) === 32 && text.startsWith(current, p + 3))) {
      const sp = text.indexOf(" ", p + 3);
      current = text.slice(p + 3, sp === -1 || sp > q ? q : sp);
      if (!first.has(current)) first.set(current, p);
    }
    p = q + 1;
  }
  process.stdout.write(`${first.size}\n`);
}

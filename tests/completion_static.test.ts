// kubectl_complete-netpath answers static completion requests in sh without starting Node (issue 12 point 6): for
// every static state it generates (flag names, choices, path flags, the first target word of each command) and every
// prefix of every candidate, its answer is the engine's byte for byte, run by dash with no kubectl-netpath on PATH;
// every other line goes to `kubectl-netpath complete -- WORDS` with the words unchanged (a stub records them). The
// checked-in file is the one scripts/gen-completions.mjs generates from the CLI.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kubectlCompleteScript } from "../src/cli/completion/static_responder.ts";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { findTool, requireTools } from "./helpers/netns.ts";

const FILE = "completions/kubectl_complete-netpath";
/** What the stub prints when the script hands `words` to `kubectl-netpath complete -- WORDS`. */
const handed = (words: string[]) => `DYN\n${["complete", "--", ...words].map((x) => `[${x}]\n`).join("")}`;

async function engine(words: string[]): Promise<string> {
  const out: string[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: "/" };
  await runCli(["complete", "--", ...words], io);
  return out.join("");
}

/** A bin directory whose `kubectl-netpath` prints `DYN` and its arguments one per line (and nothing else on PATH). */
function stubBin(): string {
  const bin = mkdtempSync(join(tmpdir(), "knp-static-"));
  writeFileSync(join(bin, "kubectl-netpath"), `#!${findTool("dash") ?? "/bin/sh"}\nprintf 'DYN\\n'; for a do printf '[%s]\\n' "$a"; done\n`);
  chmodSync(join(bin, "kubectl-netpath"), 0o755);
  return bin;
}

describe.runIf(requireTools("static completion in sh", ["dash"]))("kubectl_complete-netpath: static answers in sh", () => {
  const dash = findTool("dash") ?? "dash";
  const bin = stubBin();
  const sh = (words: string[]) => {
    const r = spawnSync(dash, [FILE, ...words], { encoding: "utf8", env: { PATH: bin } });
    return r.stdout;
  };

  it("is the file the CLI generates (node scripts/gen-completions.mjs)", async () => {
    expect(readFileSync(FILE, "utf8")).toBe(await kubectlCompleteScript());
  });

  it("every static state and every prefix of its candidates: the engine's answer, without Node", async () => {
    const bases: string[][] = [[], ["capture"], ["cleanup"], ["completion"], ["-n", "kube-system"], ["--from", "examples/iptables-lab"], ["svc/web", "--node", "k8s1"], ["capture", "-o", "x.json"]];
    let checked = 0;
    for (const base of bases) {
      const seeds: string[][] = [[...base, ""], [...base, "-"], [...base, "--"], [...base, "-o", ""], [...base, "--output", ""], [...base, "--profile", ""], [...base, "--from", ""], [...base, "--kubeconfig", ""]];
      for (const words of seeds) {
        const full = await engine(words);
        const values = full.split("\n").filter((l) => l !== "" && !l.startsWith(":")).map((l) => l.split("\t")[0]!);
        const prefixes = new Set<string>([words.at(-1)!, "zz-nothing"]);
        for (const v of values) for (let i = 1; i <= v.length; i++) prefixes.add(v.slice(0, i));
        for (const p of prefixes) {
          const w = [...words.slice(0, -1), p];
          const got = sh(w);
          if (got.startsWith("DYN\n")) {
            expect(got, w.join(" ")).toBe(handed(w));
            continue;
          }
          expect(got, JSON.stringify(w)).toBe(await engine(w));
          checked++;
        }
      }
    }
    console.info(`[completion-static] ${checked} static answers equal to the engine's`);
    expect(checked).toBeGreaterThan(300);
  }, 120_000);

  it.each([
    ["a target name", ["svc/"]],
    ["a namespace", ["-n", ""]],
    ["a context", ["--context", ""]],
    ["a node", ["svc/web", "--node", ""]],
    ["the second word of `svc NAME`", ["svc", ""]],
    ["after --", ["--", "-"]],
    ["glued short flags", ["-nkube-system", "-"]],
    ["a --flag=value under the cursor", ["--output=js"]],
    ["a subcommand after root flags", ["-n", "x", "capture", "-"]],
    ["hostile words are passed as they are", ["$(touch /tmp/pwned-knp)", "`id`", "a;b", "svc/"]],
  ])("%s goes to kubectl-netpath complete with the words unchanged", (_what, words) => {
    expect(sh(words)).toBe(handed(words));
  });

  it("static answers for the common TABs come from sh: no kubectl-netpath on PATH is needed", () => {
    for (const words of [[""], ["-"], ["--"], ["-o", ""], ["capture", "--"], ["completion", ""], ["--profile", ""]]) {
      expect(sh(words).startsWith("DYN"), words.join(" ")).toBe(false);
    }
  });
});

// The README's one-packet transcript and docs/pictures.md's pictures are the tool's output, byte for byte, so that they
// cannot go stale again (the transcript had lost the reply-path caveat; the second picture still showed a drop the
// tool no longer answers).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The output shown under `$ COMMAND` in a fenced block of the README. */
function transcript(command: string): string {
  const at = README.indexOf(`$ ${command}\n`);
  if (at < 0) throw new Error(`README has no transcript of: ${command}`);
  const from = at + command.length + 3;
  return README.slice(from, README.indexOf("```", from));
}

async function cli(command: string): Promise<string> {
  let out = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  expect(await runCli(command.split(" ").slice(2), io)).toBe(0);
  return out;
}

describe("docs/pictures.md", () => {
  const PICTURES = readFileSync(new URL("../docs/pictures.md", import.meta.url), "utf8");
  const blocks = [...PICTURES.matchAll(/```sh\n(kubectl netpath [^\n]+)\n```\n\n```mermaid\n([\s\S]*?)```/g)];
  it("has its two pictures", () => expect(blocks).toHaveLength(2));
  it.each(blocks.map((m) => [m[1]!, m[2]!]))("%s", async (command, picture) => {
    expect(await cli(command)).toBe(picture);
  });
});

describe("README transcripts", () => {
  it("the one-packet tree", async () => {
    const command = "kubectl netpath svc/kube-dns -n kube-system --from examples/iptables-lab --source 10.244.1.7 --dest 10.96.0.10:53/udp";
    let out = "";
    const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
    expect(await runCli(command.split(" ").slice(2), io)).toBe(0);
    expect(out).toBe(transcript(command));
  });
});

/**
 * Runs the CLI in-process (or builds it for a child process) with the `capture` and `cleanup` subcommands
 * registered, as src/cli/program.ts does once it wires them (until then, this registers them itself and reproduces
 * runCli's error handling). Streams are captured.
 *
 * Test helper.
 * @module
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { CommanderError } from "@commander-js/extra-typings";
import { registerCapture } from "../../src/cli/capture.ts";
import { registerCleanup } from "../../src/cli/cleanup.ts";
import type { CliIo } from "../../src/cli/io.ts";
import { buildProgram, describeError, runCli } from "../../src/cli/program.ts";
import { UsageError } from "../../src/cli/target.ts";

/** Output of one in-process run. */
export interface RunOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** A capturing CliIo. */
export function captureIo(env: Record<string, string | undefined> = {}, stderrIsTTY = false): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  // COLUMNS: these tests read whole sentences of the report; wrapping (80 columns off a terminal) is tested elsewhere.
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: { COLUMNS: "1000", ...env }, stdoutIsTTY: false, stderrIsTTY, cwd: process.cwd() };
}

/** Runs the CLI like runCli, with capture/cleanup available. */
export async function runLiveCli(argv: string[], io: CliIo): Promise<number> {
  const probe = buildProgram(io, { code: 0 });
  if (!["capture", "cleanup"].includes(argv[0] ?? "") || probe.commands.some((c) => c.name() === "capture")) return runCli(argv, io);
  const result = { code: 0 };
  const program = buildProgram(io, result);
  registerCapture(program, io, result);
  registerCleanup(program, io, result);
  try {
    await program.parseAsync(argv, { from: "user" });
    return result.code;
  } catch (e) {
    if (e instanceof CommanderError) return e.code === "commander.helpDisplayed" || e.code === "commander.help" ? 0 : 2;
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\n(run with --help for usage)\n`);
      return 2;
    }
    io.stderr(`error: ${describeError(e)}\n`);
    return 1;
  }
}

/** Runs and collects the output. */
export async function run(argv: string[], env: Record<string, string | undefined> = {}): Promise<RunOutput> {
  const io = captureIo(env);
  const code = await runLiveCli(argv, io);
  return { code, stdout: io.out.join(""), stderr: io.err.join("") };
}

/**
 * Builds a runnable CLI (Node ESM, shebang) with capture/cleanup into a per-process directory under .tmp/, plus a
 * `kubectl-netpath` shell shim next to it for kubectl's plugin discovery.
 * @param o `entry: "bin"`: the executable's own entry (src/cli/bin.ts, as dist/kubectl-netpath.cjs: its exit calls
 *   included) instead of a stand-in that only sets the exit code.
 * @returns the JS path, the bin directory (for PATH) and a remover.
 */
export async function buildCli(o: { entry?: "bin" } = {}): Promise<{ js: string; binDir: string; remove(): void }> {
  const dir = resolve(`.tmp/live-cli-${process.pid}-${Date.now()}`);
  const binDir = join(dir, "bin");
  mkdirSync(binDir, { recursive: true });
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, [
    `import process from "node:process";`,
    `import { nodeIo } from ${JSON.stringify(resolve("src/cli/io.ts"))};`,
    `import { runLiveCli } from ${JSON.stringify(resolve("tests/helpers/live_cli.ts"))};`,
    `process.exitCode = await runLiveCli(process.argv.slice(2), nodeIo());`,
  ].join("\n"));
  const js = join(dir, "cli.mjs");
  const { build } = await import("esbuild");
  await build({ entryPoints: [o.entry === "bin" ? resolve("src/cli/bin.ts") : entry], outfile: js, bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", banner: { js: "#!/usr/bin/env node" }, define: { "import.meta.main": "false" }, logLevel: "error" });
  writeFileSync(join(binDir, "kubectl-netpath"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(js)} "$@"\n`, { mode: 0o755 });
  return { js, binDir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The I/O streams and environment a command runs with, passed in (never global) so tests can capture them.
 * `nodeIo()` builds the real one from `node:process`, which Node and Deno 2 both provide.
 * @module
 */
import process from "node:process";
import { printableMessage } from "../report/printable.ts";
import { permittedEnv } from "./env.ts";

/** Streams and environment of one CLI run. */
export interface CliIo {
  stdout(text: string): void;
  /**
   * Writes one message for people (an error, a warning, a progress line), usually ending in `\n`. It may quote values
   * from a cluster, a bundle or a kubeconfig: the real streams ({@link nodeIo}) show a newline or carriage return inside
   * it as its escape (`printableMessage`), so a message of several lines is written with one call per line.
   */
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Whether stdout / stderr are terminals (colour, progress). */
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Current directory, for relative paths. */
  cwd: string;
  /** Width of the terminal on stdout, in columns, when it is one. */
  columns?: number;
}

/**
 * The process's real streams. A reader that goes away (`| head`) ends the run quietly, as kubectl does; any other
 * failed write to stdout (a full disk, a closed descriptor) is one line, `error: cannot write the output: CODE`, and
 * exit 1. Node reports a failed write as the stream's `'error'` event, after the write returned; Deno 2's
 * `process.stdout.write` throws it from the write itself (e.g. `ENOSPC`, "No space left on device (os error 28)"):
 * that throw goes to the same handler, as late as Node's event, and later writes to the failed stream are dropped, so
 * both runtimes print the same lines and exit alike.
 */
export function nodeIo(): CliIo {
  const failed = (stream: NodeJS.WriteStream, e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    // anything else (a full disk, a closed descriptor): the output is incomplete, so the run failed; one line, exit 1
    if (stream === process.stdout) {
      try {
        process.stderr.write(`error: cannot write the output: ${e.code ?? e.message}${e.code === "ENOSPC" ? " (no space left on the device)" : ""}\n`);
      } catch { /* stderr is gone too */ }
    }
    process.exit(1);
  };
  for (const stream of [process.stdout, process.stderr]) stream.on("error", (e: NodeJS.ErrnoException) => failed(stream, e));
  const broken = new Set<NodeJS.WriteStream>();
  const write = (stream: NodeJS.WriteStream, text: string) => {
    if (broken.has(stream)) return;
    try {
      stream.write(text);
    } catch (e) {
      // Deno: the write threw its error; handle it when Node would (its 'error' event comes on a later tick)
      broken.add(stream);
      process.nextTick(() => failed(stream, e as NodeJS.ErrnoException));
    }
  };
  return {
    stdout: (t) => write(process.stdout, t),
    // stderr is always for people (errors, warnings, progress) and carries names and messages from the cluster, a
    // bundle or a kubeconfig: one message per call, a newline inside it escaped (it would forge a line of its own)
    stderr: (t) => write(process.stderr, printableMessage(t)),
    // a variable Deno does not let the run read is unset, never an error (its reads are optional)
    env: permittedEnv(process.env),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    ...(process.stdout.isTTY && process.stdout.columns ? { columns: process.stdout.columns } : {}),
  };
}

/**
 * The width text output is wrapped to: the terminal's on stdout, else `COLUMNS` from the environment (as `ls` and
 * most tools honour it), else 80.
 */
export function outputWidth(io: CliIo): number {
  if (io.columns) return io.columns;
  const env = Number(io.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : 80;
}

/**
 * Whether to colour output on stdout: a terminal, and neither `NO_COLOR` (https://no-color.org) nor `TERM=dumb`.
 */
export function useColor(io: CliIo, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "") return false;
  if (io.env.TERM === "dumb") return false;
  return io.stdoutIsTTY;
}

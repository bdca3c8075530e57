/**
 * Edge: whether this process was interrupted (SIGINT / SIGTERM) during a live run, recorded by the signal handler of
 * pod_lifecycle.ts ({@link installInterruptCleanup}) and read by the CLI (src/cli/program.ts runCli), which then
 * neither reports the run's own failure (the aborted requests reject with "cancelled") nor sets exit code 1: the
 * handler deletes the debug pods and exits 128 + the signal's number, as a shell reports a process ended by it (130
 * for SIGINT, 143 for SIGTERM).
 *
 * No imports: the CLI reads it at start-up without loading the Kubernetes client.
 * @module
 */

/** An interruption in progress: the signal, the exit code it ends with, and the end of the handler's cleanup. */
export interface Interruption {
  signal: "SIGINT" | "SIGTERM";
  /** 128 + the signal's number: 130 (SIGINT), 143 (SIGTERM). */
  exitCode: number;
  /** Settles once the handler has deleted (or failed to delete) the debug pods, just before it exits the process. */
  done: Promise<void>;
}

let current: Interruption | undefined;

/**
 * Records an interruption (the first signal; later calls keep the first).
 * @param signal the signal received.
 * @param done settles when the handler's cleanup is over.
 * @returns the interruption recorded.
 */
export function recordInterruption(signal: "SIGINT" | "SIGTERM", done: Promise<void>): Interruption {
  current ??= { signal, exitCode: signal === "SIGINT" ? 130 : 143, done };
  return current;
}

/** The interruption of this process, or undefined when no SIGINT/SIGTERM reached a live run's handler. */
export function interruption(): Interruption | undefined {
  return current;
}

/** A live run stopped because the process was interrupted (the handler of {@link recordInterruption} reports it). */
export class InterruptedError extends Error {
  override name = "InterruptedError";
}

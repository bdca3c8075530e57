/**
 * Progress of a multi-node collection, for stderr when it is a terminal (kubectl prints nothing of the kind when it
 * is not, and neither does this): each node's step as it happens, and after each node that ends, a count of nodes
 * done out of the total with the slowest node so far and its time, e.g.
 * `nodes 3/16 done; slowest so far: node-7 (4.2 s)`.
 *
 * Pure but for the clock, which is passed in (tests drive it).
 * @module
 */

/** A progress reporter for one collection. */
export interface NodeProgress {
  /** A step of one node (`exec into kube-proxy pod …`, `collecting`). */
  step(node: string, text: string): void;
  /** A node started. */
  started(node: string): void;
  /** A node ended (collected or failed). */
  ended(node: string, failed: boolean): void;
}

/**
 * Builds the progress reporter.
 * @param total nodes to collect.
 * @param write where lines go (stderr); nothing is written when `enabled` is false.
 * @param enabled whether stderr is a terminal.
 * @param now the clock in milliseconds. @default Date.now
 */
export function nodeProgress(total: number, write: (line: string) => void, enabled: boolean, now: () => number = Date.now): NodeProgress {
  if (!enabled) return { step: () => {}, started: () => {}, ended: () => {} };
  const start = new Map<string, number>();
  let done = 0;
  let failed = 0;
  let slowest: { node: string; ms: number } | undefined;
  return {
    step: (node, text) => write(`node ${node}: ${text}\n`),
    started: (node) => void start.set(node, now()),
    ended: (node, bad) => {
      done++;
      if (bad) failed++;
      const ms = now() - (start.get(node) ?? now());
      if (!slowest || ms > slowest.ms) slowest = { node, ms };
      if (total > 1) {
        write(`nodes ${done}/${total} done${failed ? ` (${failed} failed)` : ""}; slowest so far: ${slowest.node} (${(slowest.ms / 1000).toFixed(1)} s)\n`);
      }
    },
  };
}

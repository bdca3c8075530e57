/**
 * Bounded concurrency: run an async function over items with at most `limit` in flight (the `--parallel` fan-out
 * over nodes, and parallel GETs of the pods a Service's endpoints reference).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. A rejection of one
 * call rejects the whole map (callers that want partial results catch inside `fn`).
 * @param items the inputs.
 * @param limit maximum concurrent calls (>= 1).
 * @param fn the async function, called with the item and its index.
 * @returns the results in input order.
 * @example
 * ```ts
 * const sizes = await mapLimit(["a", "b", "c"], 2, async (name) => name.length); // [1, 1, 1]
 * ```
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const n = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}

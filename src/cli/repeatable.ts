/**
 * A repeatable flag's values (`--node a --node b`), each once: `--node a --node a` is one node, as kubectl treats a
 * repeated name (one collection, one debug pod, one report section).
 * @param value the value just given.
 * @param previous the values before it.
 * @returns the values, in the order first given.
 */
export function collectOnce(value: string, previous: string[] | undefined): string[] {
  const list = previous ?? [];
  return list.includes(value) ? list : [...list, value];
}

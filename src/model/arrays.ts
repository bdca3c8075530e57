/**
 * Array helpers that hold for lists of any length. Runtime-neutral: no I/O.
 * @module
 */

/**
 * Appends every item to `target`, in order. Unlike `target.push(...items)`, which passes each item as an argument
 * and throws `RangeError: Maximum call stack size exceeded` past ~125,000 items on V8, it takes lists of any length
 * (a cluster's pods, a bundle's object lists).
 * @param target the list appended to (changed in place).
 * @param items what is appended.
 * @returns `target`.
 */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const x of items) target.push(x);
  return target;
}

/**
 * Sizes on the command line (`--max-bundle-size 1Gi`), written as Kubernetes quantities are: a number of bytes with
 * an optional suffix, decimal (k, M, G, T: powers of 1000) or binary (Ki, Mi, Gi, Ti: powers of 1024).
 * @module
 */
import { UsageError } from "../model/errors.ts";

const UNITS: Record<string, number> = { "": 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };

/**
 * Parses a size.
 * @param flag the flag, for the message, e.g. "--max-bundle-size".
 * @param text e.g. "512Mi", "1G", "300000000".
 * @returns the size in bytes.
 * @throws {UsageError} when malformed or not positive.
 */
export function parseByteSize(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|K|M|G|T|Ki|Mi|Gi|Ti)?B?$/.exec(text.trim());
  const n = m ? Number(m[1]) * UNITS[m[2] ?? ""]! : NaN;
  if (!Number.isFinite(n) || n < 1) throw new UsageError(`${flag} "${text}": want a size, e.g. 512Mi, 1Gi or 300000000 (bytes)`);
  return Math.floor(n);
}

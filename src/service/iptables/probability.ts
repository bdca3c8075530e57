/**
 * Exact arithmetic of the `-m statistic --mode random --probability P` cascade.
 *
 * The kernel does not keep P as written: iptables (extensions/libxt_statistic.c) stores
 * `lround(P * 2^31)` in a 32-bit field and xt_statistic matches when `(prandom_u32() & 0x7FFFFFFF) < stored`, so the
 * effective probability is `lround(P * 2^31) / 2^31`. iptables-save prints that value with `%.11f`
 * (0.3333333333 → 0.33333333349). The cascade kube-proxy writes (1/n, 1/(n-1), …, last rule unconditional) therefore
 * gives shares that are 1/n up to ~1e-10; this module computes them as the kernel does.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

const TWO_31 = 2147483648;

/**
 * The probability the kernel really applies for a `--probability` argument.
 * @param written the text after `--probability` (e.g. "0.3333333333", "0.33333333349").
 * @returns a number in [0, 1].
 * @throws {RangeError} when `written` is not a number in [0, 1].
 */
export function kernelProbability(written: string): number {
  const p = Number(written);
  if (!Number.isFinite(p) || p < 0 || p > 1 || written.trim() === "") {
    throw new RangeError(`invalid --probability "${written}" (want a number between 0 and 1)`);
  }
  return Math.round(p * TWO_31) / TWO_31;
}

/**
 * How iptables-save re-prints a probability kube-proxy wrote (`%.11f` of the kernel value).
 * @param written e.g. "0.3333333333".
 * @returns e.g. "0.33333333349".
 */
export function iptablesSaveProbability(written: string): string {
  return kernelProbability(written).toFixed(11);
}

/**
 * Formats a share as a percentage with up to two decimals, e.g. 0.5 → "50%", 1/3 → "33.33%".
 */
export function formatShare(share: number): string {
  const pct = share * 100;
  const rounded = Math.round(pct * 100) / 100;
  return `${rounded}%`;
}

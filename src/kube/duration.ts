/**
 * Durations and counts given on the command line (`--request-timeout 30s`, `--timeout 1m30s`, `--parallel 8`), read
 * as kubectl reads them: Go's time.ParseDuration units (`ns`, `us`, `ms`, `s`, `m`, `h`, combinable as `1m30s`), and
 * a bare integer meaning seconds (kubectl's `--request-timeout=5`). `0` means "no limit".
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { UsageError } from "../model/errors.ts";

/**
 * A flag value that is not a duration or count; the message names the flag and shows a valid example. A
 * {@link UsageError}, so the CLI exits 2 with the hint to `--help`.
 */
export class FlagValueError extends UsageError {
  override name = "FlagValueError";
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration into milliseconds.
 * @param flag the flag name for messages, e.g. `--timeout`.
 * @param text e.g. `30s`, `1m30s`, `500ms`, `5` (seconds), `0` (no limit).
 * @returns milliseconds (0 = no limit).
 * @throws {FlagValueError} `--timeout "soon": want a duration such as 30s, 1m30s or 500ms`.
 * @example parseDurationMs("--timeout", "1m30s") // 90000
 */
export function parseDurationMs(flag: string, text: string): number {
  const t = text.trim();
  const bad = () => new FlagValueError(`${flag} "${text}": want a duration such as 30s, 1m30s or 500ms`);
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  if (t === "" || !/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(t)) throw bad();
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  if (!Number.isFinite(ms)) throw bad();
  return Math.round(ms);
}

/**
 * Parses a positive integer count.
 * @param flag the flag name for messages, e.g. `--parallel`.
 * @param text e.g. `8`.
 * @param max the largest accepted value.
 * @throws {FlagValueError} `--parallel "0": want a whole number from 1 to 256`.
 */
export function parseCount(flag: string, text: string, max = 256): number {
  const t = text.trim();
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) throw new FlagValueError(`${flag} "${text}": want a whole number from 1 to ${max}`);
  return n;
}

/** Human form of a duration in milliseconds, e.g. `60s`, `1.5s`, `250ms`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)}s`;
}

/**
 * `-o json` and `-o yaml` for every report: the report object as is (its schema is documented in docs/report.md),
 * exact and safe to print (model/exact_serialize.ts).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { serializeExact } from "../model/exact_serialize.ts";

/** Output formats of every command. */
export type OutputFormat = "text" | "wide" | "json" | "yaml";

/**
 * Serialises a report.
 * @param report any report object (ServiceReport, PendingReport).
 * @param format "json" (2-space indent) or "yaml".
 * @returns the text, ending with a newline; no control, C1, bidirectional or zero-width character but newline in it raw.
 */
export function serializeReport(report: unknown, format: "json" | "yaml"): string {
  return serializeExact(report, format);
}

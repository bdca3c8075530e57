/**
 * `-o json` and `-o yaml` for every report: the report object as is (its schema is documented in docs/report.md).
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { stringify } from "yaml";

/** Output formats of every command. */
export type OutputFormat = "text" | "wide" | "json" | "yaml";

/**
 * Serialises a report.
 * @param report any report object (ServiceReport, PendingReport).
 * @param format "json" (2-space indent) or "yaml".
 * @returns the text, ending with a newline.
 */
export function serializeReport(report: unknown, format: "json" | "yaml"): string {
  if (format === "json") return JSON.stringify(report, null, 2) + "\n";
  return stringify(report, { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * `pvc/NAME --why-pending` and `pod/NAME --why-pending`: the pure analysis (src/pending/explain.ts) on the bundle,
 * rendered as text (a node × rule table) or as the PendingReport in JSON/YAML.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import { explainPending } from "../pending/explain.ts";
import { renderPendingText } from "../report/pending_text.ts";
import { wrapText } from "../report/style.ts";
import { serializeReport } from "../report/serialize.ts";
import { type CliIo, outputWidth, useColor } from "./io.ts";
import type { MainOptions } from "./program.ts";
import type { RunPlan } from "./run_target.ts";

/**
 * Runs the why-pending analysis and prints it.
 * @returns the exit code (0).
 * @throws {NotFoundError} when the claim or pod is not in the bundle.
 */
export function runPending(bundle: Bundle, plan: RunPlan, namespace: string, o: MainOptions, io: CliIo): Promise<number> {
  const kind = plan.target.kind === "pod" ? "pod" : "pvc";
  const report = explainPending(bundle, { kind, namespace, name: plan.target.name });
  if (plan.output === "json" || plan.output === "yaml") io.stdout(serializeReport(report, plan.output));
  else {
    const text = renderPendingText(report, { color: useColor(io, o.color) });
    io.stdout(plan.output === "wide" ? text : wrapText(text, outputWidth(io)));
  }
  return Promise.resolve(0);
}

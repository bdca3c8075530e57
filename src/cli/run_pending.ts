/**
 * `pvc/NAME --why-pending` and `pod/NAME --why-pending`.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import type { CliIo } from "./io.ts";
import type { MainOptions } from "./program.ts";
import type { RunPlan } from "./run_target.ts";

/**
 * Runs the why-pending analysis and prints it.
 * @returns the exit code.
 */
export function runPending(_bundle: Bundle, plan: RunPlan, _namespace: string, _o: MainOptions, _io: CliIo): Promise<number> {
  return Promise.reject(new Error(`${plan.target.kind}/${plan.target.name} --why-pending: not wired yet`));
}

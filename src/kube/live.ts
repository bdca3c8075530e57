/**
 * Live gathering of a Bundle from a cluster (issue 3). Placeholder until the live path lands: it says so plainly.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import type { CliIo } from "../cli/io.ts";
import type { MainOptions } from "../cli/program.ts";
import type { RunPlan } from "../cli/run_target.ts";

/**
 * Gathers the bundle a live run analyses.
 * @throws {Error} always, for now: live cluster access is not implemented yet.
 */
export function gatherBundle(_plan: RunPlan, _o: MainOptions, _io: CliIo): Promise<Bundle> {
  return Promise.reject(new Error("live cluster access is not implemented yet; analyse a saved bundle with --from PATH"));
}

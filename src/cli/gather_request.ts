/**
 * The CLI's flags mapped onto the plain options object src/kube/ takes (pure). Kept apart from run_target.ts so that
 * `capture` can use it without loading the analyses.
 * @module
 */
import type { GatherRequest } from "../kube/options.ts";
import type { MainOptions } from "./program.ts";
import type { RunPlan } from "./run_target.ts";

/**
 * The live gather's request for a validated plan and the flags (pure): the CLI's flags mapped onto the plain
 * options object src/kube/ takes.
 */
export function gatherRequest(plan: RunPlan, o: Omit<MainOptions, "output">): GatherRequest {
  const r: GatherRequest = { target: plan.target };
  if (plan.namespace !== undefined) r.namespace = plan.namespace;
  if (plan.nodes) r.nodes = plan.nodes;
  if (plan.packet) r.packet = plan.packet;
  const copy = ["kubeconfig", "context", "requestTimeout", "timeout", "sectionTimeout", "parallel", "image", "profile", "debugNamespace", "via", "exec", "dryRun", "allNodes", "fromPod"] as const;
  if (o.wholeNode) r.collect = "node";
  if (plan.output === "json") r.dryRunFormat = "json";
  for (const k of copy) if (o[k] !== undefined) (r as unknown as Record<string, unknown>)[k] = o[k];
  return r;
}


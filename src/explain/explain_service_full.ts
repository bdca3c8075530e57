/**
 * `svc/NAME` with every datapath the bundle holds: iptables-save always, plus IPVS (ipvsadm + ipset) when captured.
 * This is the analysis the CLI runs; {@link explainService} alone uses iptables only.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import { type ExplainServiceOptions, explainService, iptablesDatapath, type NodeDatapath } from "./service_path.ts";
import type { ServiceReport } from "./service_report.ts";
import type { NodeCapture } from "../bundle/bundle.ts";

/**
 * Builds a node's datapath from all its sections.
 */
export function fullDatapath(node: NodeCapture, family: 4 | 6): NodeDatapath {
  return iptablesDatapath(node, family);
}

/**
 * Explains a Service using every datapath section of the bundle.
 * @param bundle the bundle.
 * @param namespace the Service's namespace.
 * @param name the Service's name.
 * @param options nodes and packet question.
 * @returns the report.
 * @throws {NotFoundError} when the Service is not in the bundle.
 */
export function explainServiceFull(
  bundle: Bundle,
  namespace: string,
  name: string,
  options: Omit<ExplainServiceOptions, "datapath"> = {},
): ServiceReport {
  return explainService(bundle, namespace, name, { ...options, datapath: fullDatapath });
}

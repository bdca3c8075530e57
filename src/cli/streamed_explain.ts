/**
 * A live Service question analysed node by node as the collections arrive: each node's part of the report
 * (src/service/explain.ts `explainServiceNode`) is computed when that node's collection ends, while the other nodes are
 * still being collected, so the analysis overlaps the collection instead of following it; the report is then put
 * together from those parts (`finishServiceExplain`) and is the same as `explainService` on the gathered bundle.
 *
 * A part is used only when it was computed for the same question (nodes, packet, node count) as the final one; any
 * other node, and any node whose early analysis threw, is analysed again with the whole bundle, where an error is
 * reported as it always is.
 * @module
 */
import type { Bundle } from "../bundle/bundle.ts";
import type { GatherHooks } from "../kube/options.ts";
import {
  explainService,
  type ExplainServiceOptions,
  explainServiceNode,
  finishServiceExplain,
  type NodeExplained,
  prepareServiceExplain,
  type ServiceExplain,
} from "../service/explain.ts";
import type { ServiceReport } from "../service/report.ts";

/** The hooks to pass to the gather, and the report once it is done. */
export interface StreamedExplain {
  hooks: GatherHooks;
  /**
   * The report for the gathered bundle, reusing the parts computed during the collection.
   * @throws {NotFoundError} as {@link explainService} does.
   */
  report(bundle: Bundle, namespace: string, options: ExplainServiceOptions): ServiceReport;
}

/** What a part was computed for: the question's nodes and packets, and how many nodes the report covers. */
function questionKey(options: ExplainServiceOptions, nodeCount: number): string {
  const packets = [...(options.packet ? [options.packet] : []), ...(options.packets ?? [])];
  return JSON.stringify([options.nodes ?? null, packets, nodeCount]);
}

/**
 * Analyses Service `name`'s nodes as their collections end.
 * @param name the Service's name.
 * @returns the gather hooks and the final report builder.
 */
export function streamedExplain(name: string): StreamedExplain {
  const parts = new Map<string, NodeExplained>();
  let prepared: { ex: ServiceExplain; key: string } | undefined;
  let failed = false;
  const hooks: GatherHooks = {
    nodeCaptured(capture, sofar, nodeCount) {
      if (failed) return;
      try {
        const options: ExplainServiceOptions = {};
        if (sofar.nodes) options.nodes = sofar.nodes;
        if (sofar.packets) options.packets = sofar.packets;
        prepared ??= { ex: prepareServiceExplain(sofar.bundle, sofar.namespace, name, options), key: questionKey(options, nodeCount) };
        parts.set(capture.name, explainServiceNode(prepared.ex, { ...sofar.bundle, nodes: [capture] }, capture.name, nodeCount));
      } catch {
        // analysed again once the collection is over, where the error is reported as usual
        failed = true;
        parts.clear();
      }
    },
  };
  return {
    hooks,
    report(bundle, namespace, options) {
      const nodeNames = options.nodes ?? bundle.nodes.map((n) => n.name);
      if (!prepared || prepared.ex.namespace !== namespace || prepared.key !== questionKey(options, nodeNames.length)) {
        return explainService(bundle, namespace, name, options);
      }
      const ex = prepared.ex;
      return finishServiceExplain(ex, bundle, nodeNames.map((n) => parts.get(n) ?? explainServiceNode(ex, bundle, n, nodeNames.length)));
    },
  };
}

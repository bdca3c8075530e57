/**
 * The path picture as a graph, shared by the Mermaid and DOT renderers (mermaid.ts, dot.ts):
 * - for one packet (`--source/--dest`, `--from-pod`): per node, the source, each rule whose target the packet takes
 *   (common prefixes merged, so the probability branches show where they split), each endpoint with its share, pod,
 *   node and zone, and the masquerade decision;
 * - for `svc/NAME`: per node, each entry point → the chain that DNATs → each endpoint with its share, endpoints grouped
 *   by zone.
 * Labels are plain text; each renderer escapes them for its syntax.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { formatShare } from "../service/iptables/probability.ts";
import type { EndpointInfo, PacketAnswer, PacketPath, ServiceReport } from "../service/report.ts";
import type { RuleRef } from "../service/trace.ts";

/** A box of the picture. `kind` picks its shape and colour. */
export interface GraphNode {
  id: string;
  label: string;
  kind: "client" | "entry" | "rule" | "endpoint" | "drop" | "info";
}

/** An arrow, optionally labelled (a share, a verdict). */
export interface GraphEdge {
  from: string;
  to: string;
  label?: string;
}

/** A group of boxes: a node of the cluster, or a zone inside it. */
export interface GraphCluster {
  id: string;
  label: string;
  nodes: string[];
  clusters: GraphCluster[];
}

/** The whole picture. Node ids are unique and safe as identifiers in Mermaid and DOT (`n1`, `n2`, …). */
export interface PathGraph {
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  clusters: GraphCluster[];
}

/** Builds graphs with generated ids. */
class Builder {
  readonly graph: PathGraph;
  private next = 0;
  constructor(title: string) {
    this.graph = { title, nodes: [], edges: [], clusters: [] };
  }
  node(label: string, kind: GraphNode["kind"]): string {
    const id = `n${++this.next}`;
    this.graph.nodes.push({ id, label, kind });
    return id;
  }
  edge(from: string, to: string, label?: string): void {
    this.graph.edges.push(label === undefined ? { from, to } : { from, to, label });
  }
  cluster(label: string): GraphCluster {
    return { id: `c${++this.next}`, label, nodes: [], clusters: [] };
  }
}

/**
 * The short text of a rule for a picture or a tree: `table chain:line  -j TARGET …  [matches]`, the target first and
 * without the chain declaration and the comment match (the comment repeats the Service name).
 * @param r the rule.
 * @param max longest text kept, in characters (`…` marks a cut); Infinity keeps all.
 */
export function ruleLabel(r: RuleRef, max = 90): string {
  const text = r.raw.replace(/^-A \S+ /, "").replace(/(^| )-m comment --comment ("[^"]*"|\S+)/g, "").trim();
  const j = text.search(/(^| )-[jg] /);
  const action = j < 0 ? text : text.slice(j).trim();
  const matches = j < 0 ? "" : text.slice(0, j).trim();
  let label = `${r.table} ${r.chain}:${r.line}  ${action}${matches ? `  [${matches}]` : ""}`;
  if (label.length > max) label = label.slice(0, Math.max(max - 1, 0)) + "…";
  return label;
}

/** Where an endpoint lives, from the report's endpoints: `pod P on node N (zone Z)`. */
export function endpointWhere(endpoints: EndpointInfo[], ipPort: string): string {
  const ip = ipPort.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1");
  const e = endpoints.find((x) => x.address === ip);
  if (!e) return "not an endpoint of the Service in the API";
  return [e.pod ? `pod ${e.pod}` : undefined, e.node ? `on ${e.node}` : undefined, e.zone ? `zone ${e.zone}` : undefined]
    .filter(Boolean).join(", ") || "endpoint";
}

/** The rules of a path before its POSTROUTING part (which decides masquerade, said once per answer). */
export function routingRules(p: PacketPath): RuleRef[] {
  const post = p.rules.findIndex((r) => /postrouting/i.test(r.chain));
  return post < 0 ? p.rules : p.rules.slice(0, post);
}

/**
 * What the end of a path says: the endpoint, or the verdict; for a path whose end rests on a fact not collected
 * ({@link PacketPath.undecided}), both ends with the fact each needs: `leaves untranslated if 172.6.6.6 is not a local
 * address of the node, dropped by INPUT's KUBE-FIREWALL if it is (not known: … not collected)`.
 */
export function pathEnd(p: PacketPath): string {
  const u = p.undecided;
  if (!u) return verdictEnd(p);
  const other = u.otherwise === "drop" ? `dropped by ${u.otherwiseBy ?? "KUBE-FIREWALL"}` : "leaves untranslated";
  const [taken, otherWay] = u.taken ? [u.fact, "not"] : [u.notFact, "it is"];
  return `${verdictEnd(p)} if ${taken}, ${other} if ${otherWay} (not known: ${u.notCollected} was not collected)`;
}

function verdictEnd(p: PacketPath): string {
  switch (p.verdict) {
    case "dnat":
      return `DNAT to ${p.dnatTo}`;
    case "drop":
      return "dropped";
    case "reject":
      return "rejected";
    case "accept":
      return p.dnatTo ? `IPVS to ${p.dnatTo}` : "accepted without translation";
    case "no-match":
      return "no kube-proxy rule took it: leaves untranslated";
    case "unresolved":
      return `jumps to ${p.missingChain ?? "a chain"}, which the dump lacks`;
    default:
      return p.verdict;
  }
}

function masqueradeText(a: PacketAnswer): string {
  switch (a.masquerade) {
    case "always":
      return "masqueraded (SNAT)";
    case "never":
      return "not masqueraded";
    case "some":
      return "masqueraded on some paths";
    default:
      return "masquerade: does not apply";
  }
}

/**
 * The picture of a packet question: one cluster per node answering it, per destination when the question has several
 * (`--from-pod` without `--dest`: each destination of the Service).
 * @param r a ServiceReport with `packet` answers (made with a packet question).
 * @returns the graph; empty of nodes when the report has no packet answer.
 */
export function packetGraph(r: ServiceReport): PathGraph {
  const answers = r.packet ?? [];
  const several = new Set(answers.map((a) => `${a.source} ${a.destination}`)).size > 1;
  const b = new Builder(`${r.service.namespace}/${r.service.name}: ${several ? "packets" : "one packet"}`);
  for (const a of answers) {
    const c = b.cluster(several ? `node ${a.node}: ${a.destination}` : `node ${a.node}`);
    b.graph.clusters.push(c);
    const src = b.node(`${a.source} → ${a.destination}`, "client");
    c.nodes.push(src);
    // Merge the common prefixes of the paths: one box per (prefix, rule).
    const boxes = new Map<string, string>();
    for (const p of a.paths ?? []) {
      let prev = src;
      let key = "";
      for (const rule of routingRules(p)) {
        key += `|${rule.table}/${rule.chain}/${rule.line}`;
        let id = boxes.get(key);
        if (!id) {
          id = b.node(ruleLabel(rule, 60), "rule");
          boxes.set(key, id);
          c.nodes.push(id);
          b.edge(prev, id);
        }
        prev = id;
      }
      const end = p.verdict === "dnat" || (p.verdict === "accept" && p.dnatTo)
        ? b.node(`${p.dnatTo}\n${endpointWhere(r.endpoints, p.dnatTo!)}${p.masqueraded ? "\nmasqueraded" : ""}`, "endpoint")
        : b.node(pathEnd(p), p.verdict === "drop" || p.verdict === "reject" ? "drop" : "info");
      c.nodes.push(end);
      b.edge(prev, end, formatShare(p.probability));
    }
    const masq = b.node(`${masqueradeText(a)}\n${a.reason}`, "info");
    c.nodes.push(masq);
  }
  return b.graph;
}

/**
 * The picture of `svc/NAME`: per node, each entry point → the chain that DNATs (KUBE-SEP-…, an IPVS real server, an
 * nftables endpoint chain) → each endpoint with its share; endpoints grouped by zone.
 * @param r the ServiceReport.
 * @returns the graph.
 */
export function serviceGraph(r: ServiceReport): PathGraph {
  const b = new Builder(`Service ${r.service.namespace}/${r.service.name}`);
  for (const n of r.nodes) {
    const c = b.cluster(`node ${n.node}${n.zone ? ` (zone ${n.zone})` : ""}${n.proxyMode.mode !== "unknown" ? `: ${n.proxyMode.mode}` : ""}`);
    b.graph.clusters.push(c);
    if (n.error) {
      c.nodes.push(b.node(`not analysed: ${n.error}`, "drop"));
      continue;
    }
    const endpointIds = new Map<string, string>();
    const zones = new Map<string, GraphCluster>();
    const endpointBox = (ep: string) => {
      let id = endpointIds.get(ep);
      if (id) return id;
      const ip = ep.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1");
      const info = r.endpoints.find((e) => e.address === ip);
      id = b.node(`${ep}\n${endpointWhere(r.endpoints, ep)}`, "endpoint");
      endpointIds.set(ep, id);
      const zone = info?.zone ?? "no zone";
      let z = zones.get(zone);
      if (!z) {
        z = b.cluster(`zone ${zone}`);
        zones.set(zone, z);
        c.clusters.push(z);
      }
      z.nodes.push(id);
      return id;
    };
    for (const port of n.ports) {
      for (const ep of port.entryPoints) {
        const entry = b.node(`${ep.kind} ${ep.destination}${ep.balancing.scheduler ? `\nIPVS ${ep.balancing.scheduler.name}` : ""}`, "entry");
        c.nodes.push(entry);
        if (ep.balancing.shares.length === 0) {
          const ref = ep.clients[0];
          const none = b.node(ref ? `${ref.outcome}: ${ref.reason}` : "no endpoints", "drop");
          c.nodes.push(none);
          b.edge(entry, none);
          continue;
        }
        for (const s of ep.balancing.shares) {
          const share = s.share === null ? "live" : formatShare(s.share);
          if (s.via) {
            const via = b.node(s.via, "rule");
            c.nodes.push(via);
            b.edge(entry, via, share);
            b.edge(via, endpointBox(s.endpoint));
          } else {
            b.edge(entry, endpointBox(s.endpoint), share);
          }
        }
      }
    }
  }
  return b.graph;
}

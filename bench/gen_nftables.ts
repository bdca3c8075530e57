/**
 * Writes `nft -j list ruleset` output (libnftables JSON, libnftables-json(5); nft v1.0.6) of a node running kube-proxy
 * in nftables mode for a {@link ClusterPlan}, in kube-proxy's nftables layout (pkg/proxy/nftables/proxier.go,
 * ~v1.31+), as tests/fixtures/nftables/*.json show it for small rulesets:
 * - table `ip kube-proxy`; sets `cluster-ips`, `nodeport-ips`; verdict maps `firewall-ips`, `no-endpoint-nodeports`,
 *   `no-endpoint-services`, `service-ips`, `service-nodeports`; the base chains and rules (`services`,
 *   `mark-for-masquerade`, `masquerading` with `masquerade fully-random`, the filter hooks and checks);
 * - per ServicePort: `service-<hash>-ns/svc/tcp/port` with `ip daddr <ClusterIP> ip saddr != <clusterCIDR> jump
 *   mark-for-masquerade` and `numgen random mod N vmap { 0 : goto endpoint-…, … }`; `endpoint-<hash>-…__IP/port`
 *   chains with the hairpin `ip saddr IP jump mark-for-masquerade` and `meta l4proto tcp dnat to IP:port`; for
 *   NodePorts an `external-<hash>-…` chain (`jump mark-for-masquerade`, `goto service-…`) and a `service-nodeports`
 *   element;
 * - objects in nft's listing order (sets and maps, then chains, then each chain's rules), one handle counter per
 *   table (each anonymous `numgen` vmap set takes a handle, as in the fixtures), printed on one line with jansson's
 *   `", "` / `": "` separators, like nft does.
 *
 * Only the IPv4 table is written (a single-stack node); a real node may also list `ip6 kube-proxy` and iptables-nft's
 * own tables.
 *
 * Bench code (not shipped); runtime-neutral apart from node:crypto via kube_hash.ts.
 * @module
 */
import type { ClusterPlan, PlanService } from "./cluster_plan.ts";
import { parseNftJson } from "../src/datapath/nft_json.ts";
import type { NftTable } from "../src/datapath/nft_model.ts";
import { nftChainBase } from "./kube_hash.ts";

/** A JSON value as nft prints it. */
type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/**
 * Serialises like jansson without JSON_COMPACT (what `nft -j` uses): `", "` between items, `": "` after keys, no
 * newlines, `/` not escaped.
 * @param v the value.
 */
export function nftJsonText(v: Json): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(nftJsonText).join(", ")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${nftJsonText(x)}`).join(", ")}}`;
}

/** Chain names of one planned ServicePort in nftables mode. */
export interface NftServiceChains {
  /** `service-<hash>-ns/svc/tcp/port`. */
  service: string;
  /** `external-<hash>-…`, for NodePort Services. */
  external?: string;
  /** `endpoint-<hash>-ns/svc/tcp/port__IP/port`, in endpoint order. */
  endpoints: string[];
}

/**
 * The chain names kube-proxy's nftables proxier gives a planned Service.
 * @param svc the Service.
 */
export function nftServiceChains(svc: PlanService): NftServiceChains {
  const proto = svc.protocol.toLowerCase();
  const base = `${svc.namespace}/${svc.name}/${proto}/${svc.portName}`;
  const hashed = nftChainBase(base);
  const out: NftServiceChains = {
    service: `service-${hashed}`,
    endpoints: svc.endpoints.map((ep) => `endpoint-${nftChainBase(`${base}__${ep.ip}/${svc.targetPort}`)}`),
  };
  if (svc.nodePort !== undefined) out.external = `external-${hashed}`;
  return out;
}

const FAMILY = "ip";
const TABLE = "kube-proxy";
const MARK = 0x4000;

const payload = (protocol: string, field: string): Json => ({ payload: { protocol, field } });
const match = (op: string, left: Json, right: Json): Json => ({ match: { op, left, right } });
const prefix = (cidr: string): Json => {
  const [addr, len] = cidr.split("/");
  return { prefix: { addr: addr!, len: Number(len) } };
};
const jump = (target: string): Json => ({ jump: { target } });
const goto = (target: string): Json => ({ goto: { target } });
const ctNew = (): Json => match("in", { ct: { key: "state" } }, "new");
const daddrProtoPort = (): Json => ({
  concat: [payload("ip", "daddr"), { meta: { key: "l4proto" } }, payload("th", "dport")],
});
const protoPort = (): Json => ({ concat: [{ meta: { key: "l4proto" } }, payload("th", "dport")] });

function ipNumber(ip: string): number {
  return ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
}

/** Options of {@link nftRulesetJson}. */
export interface NftRulesetOptions {
  /** Handle of the `ip kube-proxy` table. @default 1 */
  tableHandle?: number;
}

/**
 * Renders the node's `nft -j list ruleset` output.
 * @param plan the cluster.
 * @param options table handle.
 * @returns the JSON text on one line, ending with a newline (as nft prints it).
 */
export function nftRulesetJson(plan: ClusterPlan, options: NftRulesetOptions = {}): string {
  return nftJsonText({ nftables: nftRulesetObjects(plan, options) }) + "\n";
}

/**
 * The objects of the node's `nft -j list ruleset` (the `nftables` array of {@link nftRulesetJson}), for a caller that
 * works on them rather than on the text.
 * @param plan the cluster.
 * @param options table handle.
 * @returns metainfo, table, sets and maps, chains, rules, in nft's listing order; each a fresh object.
 */
export function nftRulesetObjects(plan: ClusterPlan, options: NftRulesetOptions = {}): { [k: string]: Json }[] {
  let handle = 0;
  const next = (): number => ++handle;
  const objects: Json[] = [
    { metainfo: { version: "1.0.6", release_name: "Lester Gooch #5", json_schema_version: 1 } },
    { table: { family: FAMILY, name: TABLE, handle: options.tableHandle ?? 1 } },
  ];
  const order = plan.writeOrder.map((i) => plan.services[i]!);
  const chains = order.map(nftServiceChains);

  // Sets and maps.
  const clusterIPs = plan.services.map((s) => s.clusterIP).sort((a, b) => ipNumber(a) - ipNumber(b));
  const set = (name: string, type: Json, comment: string, elem: Json[] | undefined, isMap: boolean): Json => {
    const body: { [k: string]: Json } = { family: FAMILY, name, table: TABLE, type, handle: next(), comment };
    if (isMap) body.map = "verdict";
    if (elem !== undefined && elem.length > 0) body.elem = elem;
    return isMap ? { map: body } : { set: body };
  };
  objects.push(set("cluster-ips", "ipv4_addr", "Active ClusterIPs", clusterIPs, false));
  objects.push(set("nodeport-ips", "ipv4_addr", "IPs that accept NodePort traffic", [plan.dumpNode.internalIP], false));
  const addrProtoPort: Json = ["ipv4_addr", "inet_proto", "inet_service"];
  objects.push(set("firewall-ips", addrProtoPort, "destinations that are subject to LoadBalancerSourceRanges", undefined, true));
  objects.push(
    set(
      "no-endpoint-nodeports",
      ["inet_proto", "inet_service"],
      "vmap to drop or reject packets to service nodeports with no endpoints",
      undefined,
      true,
    ),
  );
  objects.push(
    set("no-endpoint-services", addrProtoPort, "vmap to drop or reject packets to services with no endpoints", undefined, true),
  );
  const serviceIps: Json[] = order.map((s, k) => [
    { concat: [s.clusterIP, s.protocol.toLowerCase(), s.port] },
    goto(chains[k]!.service),
  ]);
  objects.push(set("service-ips", addrProtoPort, "ClusterIP, ExternalIP and LoadBalancer IP traffic", serviceIps, true));
  const nodePorts: Json[] = [];
  order.forEach((s, k) => {
    if (s.nodePort !== undefined) nodePorts.push([{ concat: [s.protocol.toLowerCase(), s.nodePort] }, goto(chains[k]!.external!)]);
  });
  objects.push(set("service-nodeports", ["inet_proto", "inet_service"], "NodePort traffic", nodePorts, true));

  // Chains: base chains, then per ServicePort.
  const chainObjects: Json[] = [];
  const chain = (name: string, hook?: { type: string; hook: string; prio: number }): void => {
    const body: { [k: string]: Json } = { family: FAMILY, table: TABLE, name, handle: next() };
    if (hook) Object.assign(body, hook, { policy: "accept" });
    chainObjects.push({ chain: body });
  };
  chain("cluster-ips-check");
  chain("filter-prerouting-pre-dnat", { type: "filter", hook: "prerouting", prio: -110 });
  chain("filter-output-pre-dnat", { type: "filter", hook: "output", prio: -110 });
  chain("filter-forward", { type: "filter", hook: "forward", prio: 0 });
  chain("filter-input", { type: "filter", hook: "input", prio: 0 });
  chain("filter-output", { type: "filter", hook: "output", prio: 0 });
  chain("firewall-check");
  chain("mark-for-masquerade");
  chain("masquerading");
  chain("nat-output", { type: "nat", hook: "output", prio: -100 });
  chain("nat-postrouting", { type: "nat", hook: "postrouting", prio: 100 });
  chain("nat-prerouting", { type: "nat", hook: "prerouting", prio: -100 });
  chain("nodeport-endpoints-check");
  chain("reject-chain");
  chain("services");
  chain("service-endpoints-check");
  for (const ch of chains) {
    chain(ch.service);
    if (ch.external !== undefined) chain(ch.external);
    for (const e of ch.endpoints) chain(e);
  }
  for (const o of chainObjects) objects.push(o); // not push(...): 100,000 Services overflow the call stack

  // Rules, grouped per chain in chain order.
  const rule = (chainName: string, expr: Json[], comment?: string): void => {
    const body: { [k: string]: Json } = { family: FAMILY, table: TABLE, chain: chainName, handle: next() };
    if (comment !== undefined) body.comment = comment;
    body.expr = expr;
    objects.push({ rule: body });
  };
  rule("cluster-ips-check", [match("==", payload("ip", "daddr"), "@cluster-ips"), { reject: { type: "icmp", expr: "port-unreachable" } }], "Reject traffic to invalid ports of ClusterIPs");
  rule("cluster-ips-check", [match("==", payload("ip", "daddr"), prefix(plan.serviceCIDR)), { drop: null }], "Drop traffic to unallocated ClusterIPs");
  rule("filter-prerouting-pre-dnat", [ctNew(), jump("firewall-check")]);
  rule("filter-output-pre-dnat", [ctNew(), jump("firewall-check")]);
  rule("filter-forward", [ctNew(), jump("service-endpoints-check")]);
  rule("filter-forward", [ctNew(), jump("cluster-ips-check")]);
  rule("filter-input", [ctNew(), jump("nodeport-endpoints-check")]);
  rule("filter-input", [ctNew(), jump("service-endpoints-check")]);
  rule("filter-output", [ctNew(), jump("service-endpoints-check")]);
  rule("filter-output", [ctNew(), jump("cluster-ips-check")]);
  rule("firewall-check", [{ vmap: { key: daddrProtoPort(), data: "@firewall-ips" } }]);
  rule("mark-for-masquerade", [{ mangle: { key: { meta: { key: "mark" } }, value: { "|": [{ meta: { key: "mark" } }, MARK] } } }]);
  rule("masquerading", [match("==", { "&": [{ meta: { key: "mark" } }, MARK] }, 0), { return: null }]);
  rule("masquerading", [{ mangle: { key: { meta: { key: "mark" } }, value: { "^": [{ meta: { key: "mark" } }, MARK] } } }]);
  rule("masquerading", [{ masquerade: { flags: "fully-random" } }]);
  rule("nat-output", [jump("services")]);
  rule("nat-postrouting", [jump("masquerading")]);
  rule("nat-prerouting", [jump("services")]);
  rule("nodeport-endpoints-check", [match("==", payload("ip", "daddr"), "@nodeport-ips"), { vmap: { key: protoPort(), data: "@no-endpoint-nodeports" } }]);
  rule("reject-chain", [{ reject: { type: "icmp", expr: "port-unreachable" } }]);
  rule("services", [{ vmap: { key: daddrProtoPort(), data: "@service-ips" } }]);
  rule("services", [match("==", payload("ip", "daddr"), "@nodeport-ips"), { vmap: { key: protoPort(), data: "@service-nodeports" } }]);
  rule("service-endpoints-check", [{ vmap: { key: daddrProtoPort(), data: "@no-endpoint-services" } }]);
  order.forEach((svc, k) => {
    const ch = chains[k]!;
    const proto = svc.protocol.toLowerCase();
    rule(ch.service, [
      match("==", payload("ip", "daddr"), svc.clusterIP),
      match("!=", payload("ip", "saddr"), prefix(plan.clusterCIDR)),
      jump("mark-for-masquerade"),
    ]);
    next(); // the anonymous set behind the numgen vmap takes a handle
    rule(ch.service, [{
      vmap: {
        key: { numgen: { mode: "random", mod: ch.endpoints.length, offset: 0 } },
        data: { set: ch.endpoints.map((e, i): Json => [i, goto(e)]) },
      },
    }]);
    if (ch.external !== undefined) {
      rule(ch.external, [jump("mark-for-masquerade")]);
      rule(ch.external, [goto(ch.service)]);
    }
    svc.endpoints.forEach((ep, i) => {
      rule(ch.endpoints[i]!, [match("==", payload("ip", "saddr"), ep.ip), jump("mark-for-masquerade")]);
      rule(ch.endpoints[i]!, [match("==", { meta: { key: "l4proto" } }, proto), { dnat: { addr: ep.ip, port: svc.targetPort } }]);
    });
  });
  return objects as { [k: string]: Json }[];
}

/**
 * Renders the node's `nft list table ip kube-proxy` output for the same ruleset as {@link nftRulesetJson}: what live
 * collection reads in nftables mode (section `nft-text`). The JSON is read back through the project's `nft -j` reader
 * (src/datapath/nft_json.ts), whose rule text is nft's own (checked against nft 1.0.6 there), and laid out as nft
 * lists a table: tabs, a blank line between objects, sets and maps first, elements two to a line in sets and one to a
 * line in maps (nft wraps long lists; its element order is the kernel's, here the generator's), numeric base-chain
 * priorities (nft prints symbolic names where one exists; the text reader takes both). tests/bench_generator.test.ts
 * checks that a real `nft list table` of the loaded JSON gives the same analysis.
 * @param plan the cluster.
 * @returns the text, ending with a newline.
 */
export function nftRulesetText(plan: ClusterPlan): string {
  return nftTableText(parseNftJson(nftRulesetJson(plan)).tables[0]!);
}

/**
 * One table as `nft list table` lays it out (see {@link nftRulesetText}): `table <family> <name> {`, its sets and
 * maps, then its chains, each block separated by a blank line, and the closing `}`.
 * @param t the table, as the project's nft readers model it.
 * @returns the text, ending with a newline.
 */
export function nftTableText(t: NftTable): string {
  const out: string[] = [`table ${t.family} ${t.name} {`];
  const blocks: string[][] = [];
  for (const s of t.sets.values()) {
    const b = [`\t${s.kind} ${s.name} {`, `\t\ttype ${s.type}${s.dataType !== undefined ? ` : ${s.dataType}` : ""}`];
    if (s.flags.length > 0) b.push(`\t\tflags ${s.flags.join(",")}`);
    if (s.elements.length > 0) {
      const per = s.kind === "map" ? 1 : 2;
      const lines: string[] = [];
      for (let i = 0; i < s.elements.length; i += per) lines.push(s.elements.slice(i, i + per).map((e) => e.text).join(", "));
      b.push(`\t\telements = { ${lines.join(",\n\t\t\t     ")} }`);
    }
    b.push("\t}");
    blocks.push(b);
  }
  for (const c of t.chains.values()) {
    const b = [`\tchain ${c.name} {`];
    if (c.base) b.push(`\t\ttype ${c.base.type} hook ${c.base.hook} priority ${c.base.priority}; policy ${c.base.policy ?? "accept"};`);
    for (const r of c.rules) b.push(`\t\t${r.text}${r.comment !== undefined ? ` comment ${JSON.stringify(r.comment)}` : ""}`);
    b.push("\t}");
    blocks.push(b);
  }
  out.push(blocks.map((b) => b.join("\n")).join("\n\n"), "}", "");
  return out.join("\n");
}

/**
 * Whether kube-proxy is the datapath of Services on a node at all (issue 15). Many clusters have none: Cilium's
 * kube-proxy replacement (and GKE Dataplane V2, its `anetd`), Calico's eBPF data plane, kube-router's service proxy,
 * Antrea Proxy, OVN-Kubernetes. On such a node the dump holds no kube-proxy state (no `KUBE-SERVICES` chain in table
 * nat, no nftables table `kube-proxy`), and comparing it with the API would report every endpoint as drift. This reads
 * what the bundle shows — the node's dump and the DaemonSets of kube-system (the kube-proxy one, and the agents
 * above, by name) — and says which datapath serves Services, what this report cannot tell, and the agent's own
 * command to ask. Nothing is compared with rules the tool does not read.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { Bundle, NodeCapture } from "../bundle/bundle.ts";
import { shellWord } from "../model/shell_word.ts";

/** A Service datapath other than kube-proxy, as far as the bundle shows. */
export interface OtherServiceDatapath {
  /** e.g. `Cilium (kube-proxy replacement)`, or `not kube-proxy (unidentified)`. */
  datapath: string;
  /** The report's `proxyMode.mode` for it: `cilium` (Cilium, GKE Dataplane V2), `other` for the other agents. */
  mode: "cilium" | "other";
  /** What shows it, e.g. `no KUBE-SERVICES chain in the node's nat table`, `DaemonSet kube-system/cilium`. */
  evidence: string[];
  /** The agent's own command that lists how it serves the Service. */
  ask: string;
  /** The bundle holds the agent's service table (Cilium: section `cilium-services`), so the node can be compared. */
  table?: boolean;
}

/** The agents, by DaemonSet name; `ask` is completed with the DaemonSet's namespace (`-n NS`). */
const AGENTS: { name: RegExp; datapath: string; ask: string; mode?: "cilium" }[] = [
  { name: /^cilium$/, datapath: "Cilium (eBPF kube-proxy replacement)", ask: "exec ds/cilium -c cilium-agent -- cilium-dbg service list", mode: "cilium" },
  { name: /^anetd$/, datapath: "GKE Dataplane V2 (Cilium, anetd)", ask: "exec ds/anetd -c cilium-agent -- cilium service list", mode: "cilium" },
  { name: /^calico-node$/, datapath: "Calico (eBPF data plane)", ask: "exec ds/calico-node -c calico-node -- calico-node -bpf nat dump" },
  { name: /^kube-router$/, datapath: "kube-router (IPVS service proxy)", ask: "exec ds/kube-router -- ipvsadm -Ln" },
  { name: /^antrea-agent$/, datapath: "Antrea Proxy (Open vSwitch)", ask: "exec ds/antrea-agent -c antrea-agent -- antctl get serviceexternalip; antctl trace-packet" },
  { name: /^ovnkube-node$/, datapath: "OVN-Kubernetes (OVN load balancers)", ask: "exec ds/ovnkube-node -c nb-ovsdb -- ovn-nbctl lb-list" },
];
const askIn = (namespace: string, ask: string) => `kubectl -n ${shellWord(namespace)} ${ask}`;
/** The bundle's Cilium agent DaemonSet (cilium, or GKE's anetd: the AGENTS of mode cilium), if it lists one. */
const ciliumDaemonSet = (bundle: Bundle) =>
  (bundle.objects.daemonSets ?? []).find((d) => AGENTS.some((a) => a.mode === "cilium" && a.name.test(d.metadata.name)));

/**
 * Whether the node's dump holds any kube-proxy state: an iptables `KUBE-SERVICES` chain (`iptables-save`,
 * `ip6tables-save`), kube-proxy's nftables table `ip kube-proxy` / `ip6 kube-proxy` (pkg/proxy/nftables/proxier.go,
 * `kubeProxyTable`) in `nft-json` or in `nft-text` — the only nftables section a live run collects (`nft list table
 * ip kube-proxy`, docs/bundle.md) — or IPVS virtual servers with kube-proxy's ipsets.
 * @param capture the node's collected state.
 * @returns true when any of them is there; false for an empty or absent dump.
 */
export function hasKubeProxyState(capture: NodeCapture): boolean {
  // line-start tests with indexOf: a multiline regex over a 30 MB dump costs tens of milliseconds
  const atLineStart = (text: string, what: string) => text.startsWith(what) || text.includes(`\n${what}`);
  for (const sec of ["iptables-save", "ip6tables-save"] as const) {
    const save = capture.sections[sec]?.stdout ?? "";
    if (atLineStart(save, ":KUBE-SERVICES ") || atLineStart(save, "-A KUBE-SERVICES ")) return true;
  }
  const nft = capture.sections["nft-json"]?.stdout ?? "";
  if (/"table":\s*"kube-proxy"|"name":\s*"kube-proxy"/.test(nft)) return true;
  // nft's text listing opens each table at the start of a line: `table ip kube-proxy {` (`… { # handle 3` with -a)
  const text = capture.sections["nft-text"]?.stdout ?? "";
  if (atLineStart(text, "table ip kube-proxy {") || atLineStart(text, "table ip6 kube-proxy {")) return true;
  if ((capture.sections.ipvsadm?.stdout ?? "").includes("TCP ") && /KUBE-/.test(capture.sections.ipset?.stdout ?? "")) return true;
  return false;
}

/**
 * The other Service datapath of a node, or undefined when kube-proxy's state is there (or the dump says nothing:
 * no iptables section at all).
 * @param bundle the bundle (its DaemonSets name the agents).
 * @param capture the node's collected state.
 */
export function otherServiceDatapath(bundle: Bundle, capture: NodeCapture): OtherServiceDatapath | undefined {
  const cilium = capture.sections["cilium-services"];
  if (cilium && (cilium.exitCode ?? 0) === 0 && !hasKubeProxyState(capture)) {
    // the node's Cilium agent answered with its service table: Cilium serves Services here
    const evidence = ["the node's Cilium agent lists its service table (cilium-dbg service list)"];
    if (capture.sections["iptables-save"] !== undefined || capture.sections["nft-json"] !== undefined || capture.sections["nft-text"] !== undefined) evidence.unshift("no KUBE-SERVICES chain in the node's nat table and no nftables table kube-proxy");
    const ds = (bundle.objects.daemonSets ?? []).find((d) => AGENTS[0]!.name.test(d.metadata.name));
    return { datapath: "Cilium (eBPF kube-proxy replacement)", mode: "cilium", evidence, ask: askIn(ds?.metadata.namespace ?? "kube-system", AGENTS[0]!.ask), table: true };
  }
  if (capture.sections["iptables-save"] === undefined && capture.sections["nft-json"] === undefined && capture.sections["nft-text"] === undefined) return undefined;
  if (capture.sections["iptables-save"]?.exitCode !== undefined && capture.sections["iptables-save"].exitCode !== 0) return undefined;
  if (hasKubeProxyState(capture)) return undefined;
  const ds = bundle.objects.daemonSets ?? [];
  const kubeProxy = ds.some((d) => d.metadata.name === "kube-proxy");
  // kube-proxy deployed (the agent, e.g. Cilium, is then the CNI only): a node without its rules is drift
  if (kubeProxy) return undefined;
  const evidence = ["no KUBE-SERVICES chain in the node's nat table and no nftables table kube-proxy"];
  for (const a of AGENTS) {
    const d = ds.find((x) => a.name.test(x.metadata.name));
    if (!d) continue;
    evidence.push(`DaemonSet ${d.metadata.namespace ?? "kube-system"}/${d.metadata.name}`, "no kube-system/kube-proxy DaemonSet");
    return { datapath: a.datapath, mode: a.mode ?? "other", evidence, ask: askIn(d.metadata.namespace ?? "kube-system", a.ask) };
  }
  return undefined;
}

/**
 * The note for a node without any kube-proxy state and no known agent in the bundle: the drift that follows assumes
 * kube-proxy, which may not be this node's datapath. With kube-proxy deployed and a Cilium DaemonSet too, Cilium's
 * kube-proxy replacement may serve this node (a node kube-proxy's DaemonSet does not run on, e.g. during a migration):
 * the note says so, and which setting decides.
 */
export function noKubeProxyStateNote(bundle: Bundle): string {
  const ds = bundle.objects.daemonSets ?? [];
  const kubeProxy = ds.some((d) => d.metadata.name === "kube-proxy");
  const cilium = ciliumDaemonSet(bundle);
  const ciliumToo = cilium
    ? `; a Cilium agent is deployed too (DaemonSet ${cilium.metadata.namespace ?? "kube-system"}/${cilium.metadata.name}): with kubeProxyReplacement=true it serves this node's Services itself, and kube-proxy's absence here is expected — ` +
      `the agent's kube-proxy-replacement setting decides (kubectl -n ${shellWord(cilium.metadata.namespace ?? "kube-system")} get configmap cilium-config; cilium-dbg status), and its table (cilium-dbg service list) says how it serves the Service`
    : "";
  return `no kube-proxy state on this node (no KUBE-SERVICES chain, no nftables table kube-proxy): ${kubeProxy ? "kube-proxy is deployed (DaemonSet kube-system/kube-proxy) but has not programmed this node, or the dump is of another network namespace" : "kube-proxy is not running here, or another component serves Services (Cilium, Calico eBPF, kube-router, Antrea, OVN-Kubernetes: kubectl get ds -A shows which)"}${ciliumToo}; the drift below assumes kube-proxy`;
}

/** Cilium seen on a node whose dump holds kube-proxy state: both are there, and the analysis follows kube-proxy. */
export interface CiliumAlongside {
  /** What shows Cilium, e.g. `the node's Cilium agent lists its service table (cilium-dbg service list)`, `DaemonSet kube-system/cilium`. */
  evidence: string[];
  /** The bundle holds the node's Cilium service table (section `cilium-services`, exit 0): it is compared too. */
  table: boolean;
  /**
   * The bundle lists the Cilium DaemonSet but no kube-system/kube-proxy one: kube-proxy's rules may be left over (a
   * bundle with no DaemonSets at all tells nothing either way).
   */
  kubeProxyAbsent: boolean;
  /** The agent's command that lists its service table. */
  ask: string;
}

/**
 * Cilium next to kube-proxy on one node: the dump holds kube-proxy state ({@link hasKubeProxyState}) and the bundle
 * shows a Cilium agent (the node's Cilium service table, or a cilium/anetd DaemonSet). Cilium translates Service
 * addresses in its BPF programs before kube-proxy's rules see the packet — pod → ClusterIP traffic with any
 * kubeProxyReplacement from 1.15 ("false": "except for ClusterIP services accessed from pods", Documentation/network/
 * kubernetes/kubeproxy-free.rst, kube-proxy hybrid modes), every frontend type with kubeProxyReplacement=true, even
 * with kube-proxy still deployed — so kube-proxy's answer may not be the packet's path; the setting is not in the
 * bundle.
 * @param bundle the bundle (its DaemonSets).
 * @param capture the node's collected state.
 * @returns undefined when the node has no kube-proxy state or the bundle shows no Cilium agent.
 */
export function ciliumAlongsideKubeProxy(bundle: Bundle, capture: NodeCapture): CiliumAlongside | undefined {
  if (!hasKubeProxyState(capture)) return undefined;
  const section = capture.sections["cilium-services"];
  const table = section !== undefined && (section.exitCode ?? 0) === 0;
  const ds = bundle.objects.daemonSets ?? [];
  const agent = ciliumDaemonSet(bundle);
  if (!table && !agent) return undefined;
  const evidence: string[] = [];
  if (table) evidence.push("the node's Cilium agent lists its service table (cilium-dbg service list)");
  if (agent) evidence.push(`DaemonSet ${agent.metadata.namespace ?? "kube-system"}/${agent.metadata.name}`);
  const kubeProxyAbsent = agent !== undefined && !ds.some((d) => d.metadata.name === "kube-proxy");
  const a = AGENTS.find((x) => agent && x.name.test(agent.metadata.name)) ?? AGENTS[0]!;
  return { evidence, table, kubeProxyAbsent, ask: askIn(agent?.metadata.namespace ?? "kube-system", a.ask) };
}

/** The node note for {@link CiliumAlongside}: both are present, which one the analysis follows and why, what decides. */
export function ciliumAlongsideNote(a: CiliumAlongside): string {
  const leftover = !a.kubeProxyAbsent ? "" : " — and the bundle holds no kube-system/kube-proxy DaemonSet, so these rules may be left over from before a move to Cilium's kube-proxy replacement";
  return `a Cilium agent runs next to kube-proxy's rules on this node (${a.evidence.join("; ")})${leftover}: the analysis below follows kube-proxy's rules, the Service datapath this report can trace. ` +
    `But Cilium translates a Service address in its BPF programs before those rules see the packet: pod → ClusterIP connections with any kubeProxyReplacement setting from Cilium 1.15, every frontend type with kubeProxyReplacement=true. ` +
    `So the kube-proxy answer, for pod clients at least, may not be the packet's path: the agent's kube-proxy-replacement setting decides (kubectl -n kube-system get configmap cilium-config; cilium-dbg status: KubeProxyReplacement)` +
    (a.table ? "; Cilium's own table is compared with the API below" : `; its table was not collected: ${a.ask}`);
}

/** The node note for {@link OtherServiceDatapath}. */
export function otherDatapathNote(o: OtherServiceDatapath): string {
  if (o.table) {
    return `Services on this node are served by ${o.datapath}, not kube-proxy (${o.evidence.join("; ")}): its service table is compared with the API below; ` +
      `masquerading and the packet path inside its BPF programs are not read (cilium-dbg bpf lb list, cilium-dbg monitor)`;
  }
  return `Services on this node are served by ${o.datapath}, not kube-proxy (${o.evidence.join("; ")}): this report reads kube-proxy's state only, ` +
    `so it cannot tell how this node balances or masquerades the Service and reports no drift against rules kube-proxy does not own; ask the agent: ${o.ask}`;
}

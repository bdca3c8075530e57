// The raw table runs before nat: NodeLocal DNSCache's `-d 10.96.0.10/32 … -j NOTRACK` rules (raw PREROUTING and
// OUTPUT) untrack DNS packets to the kube-dns ClusterIP, so nat — kube-proxy's DNAT — never sees them and they reach
// the node-local cache listening on that address. Measured in a network namespace with this dump loaded (iptables-nft):
// 4 of 4 queries answered by the local listener, none DNATed; with raw flushed, DNAT to the CoreDNS pods.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";

const RAW = [
  "*raw",
  ":PREROUTING ACCEPT [0:0]",
  ":OUTPUT ACCEPT [0:0]",
  "-A PREROUTING -d 169.254.20.10/32 -p udp -m udp --dport 53 -j NOTRACK",
  "-A PREROUTING -d 10.96.0.10/32 -p udp -m udp --dport 53 -j NOTRACK",
  "-A OUTPUT -d 10.96.0.10/32 -p udp -m udp --dport 53 -j NOTRACK",
  "COMMIT",
  "",
].join("\n");

const lab = (raw: boolean) => {
  const b = readBundle("examples/iptables-lab");
  const sec = b.nodes[0]!.sections["iptables-save"]!;
  if (raw) sec.stdout = RAW + sec.stdout;
  return b;
};

describe("raw-table NOTRACK before kube-proxy (NodeLocal DNSCache)", () => {
  it("a DNS packet to the kube-dns ClusterIP is untracked: not translated, and the answer names the raw rule", () => {
    const r = explainService(lab(true), "kube-system", "kube-dns", { packet: { source: "10.244.0.9", destination: "10.96.0.10", port: 53, protocol: "udp" } });
    const a = r.packet![0]!;
    expect(a.outcome).toBe("not-handled");
    expect(a.caveats.join("\n")).toMatch(/untracked by raw PREROUTING:\d+ \(-d 10\.96\.0\.10\/32 -p udp -m udp --dport 53 -j NOTRACK\): the packet skips nat/);
  });

  it("TCP to the same ClusterIP (no NOTRACK rule for it here) is still balanced by kube-proxy", () => {
    const r = explainService(lab(true), "kube-system", "kube-dns", { packet: { source: "10.244.0.9", destination: "10.96.0.10", port: 53, protocol: "tcp" } });
    expect(r.packet![0]!.outcome).toBe("forwarded");
  });

  it("the Service's report: the untracked port is unverifiable, not 'kube-proxy has not programmed this Service'", () => {
    const d = explainService(lab(true), "kube-system", "kube-dns").nodes[0]!.drift;
    expect(d.map((x) => [x.kind, x.portKey])).toEqual([["unverifiable", "kube-system/kube-dns:dns"]]);
    expect(d[0]!.message).toMatch(/untracks packets to 10\.96\.0\.10:53\/udp in its raw table/);
    expect(explainService(lab(false), "kube-system", "kube-dns").nodes[0]!.drift).toEqual([]);
    // the verdict carries the rule (a field, not its wording read back)
    const pod = explainService(lab(true), "kube-system", "kube-dns").nodes[0]!.ports[0]!.entryPoints.find((e) => e.kind === "ClusterIP")!.clients.find((c) => c.client === "pod-same-node")!;
    expect([pod.untrackedBy?.table, pod.untrackedBy?.chain]).toEqual(["raw", "PREROUTING"]);
  });
});

// iptables-nft-save warns "iptables-legacy tables present" (in its output or on stderr): both backends' hooks see
// every packet (a NOTRACK loaded with iptables-legacy untracked the queries in a namespace whose nft tables hold
// kube-proxy's rules), so the answers say what they could not see.
describe("the other iptables backend's tables", () => {
  const WARNING = "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n";
  const ask = (edit: (s: { stdout: string; stderr?: string }) => void) => {
    const b = lab(false);
    edit(b.nodes[0]!.sections["iptables-save"]!);
    return explainService(b, "kube-system", "kube-dns", { packet: { source: "10.244.0.9", destination: "10.96.0.10", port: 53, protocol: "udp" } });
  };
  it.each([
    ["in the output", (s: { stdout: string }) => (s.stdout = WARNING + s.stdout)],
    ["on stderr", (s: { stderr?: string }) => (s.stderr = WARNING.slice(2))],
  ])("the warning %s: each answer and the node's notes say the legacy tables were not collected", (_, edit) => {
    const r = ask(edit);
    expect(r.packet![0]!.caveats.join("\n")).toMatch(/iptables-legacy tables are present on this node besides these nf_tables ones/);
    expect(r.nodes[0]!.notes.join("\n")).toMatch(/iptables-legacy tables are present/);
  });
  it("no warning, no such caveat", () => {
    expect(ask(() => {}).packet![0]!.caveats.join("\n")).not.toMatch(/iptables-legacy tables/);
  });
});

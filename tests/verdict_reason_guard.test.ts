// Every answer says why: no client verdict and no packet answer may carry an empty `reason` (the text printed
// `masquerade: ` with nothing after it, JSON `"reason": ""`). Over every Service of every example bundle, each of its
// clients, and packets to each ClusterIP port from outside the cluster and from each pod of the bundle.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { explainService } from "../src/service/explain.ts";
import type { PacketQuestion } from "../src/model/question.ts";
import { readBundle } from "../src/io/read_bundle.ts";

const root = new URL("../examples/", import.meta.url).pathname;
const bundles = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

describe("no verdict and no packet answer without a reason", () => {
  it("covers the example bundles", () => {
    expect(bundles).toEqual(expect.arrayContaining(["iptables-lab", "ipvs-kind", "ipvs-lab", "lb-legacy", "nftables-lab"]));
  });
  for (const name of bundles) {
    it(name, () => {
      const b = readBundle(`${root}${name}`);
      if (b.nodes.length === 0) return;
      const podIPs = [...new Set(b.objects.pods.flatMap((p) => p.status?.podIP ? [p.status.podIP] : []))].slice(0, 8);
      const empty: string[] = [];
      let answers = 0;
      for (const svc of b.objects.services) {
        const ns = svc.metadata.namespace ?? "default";
        const ips = (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP ?? ""]).filter((ip) => ip !== "" && ip !== "None" && !ip.includes(":"));
        const packets: PacketQuestion[] = [];
        for (const ip of ips) {
          for (const p of svc.spec?.ports ?? []) {
            const protocol = (p.protocol ?? "TCP").toLowerCase() as PacketQuestion["protocol"];
            for (const source of ["203.0.113.10", ...podIPs]) packets.push({ source, destination: ip, port: p.port, protocol });
          }
        }
        const r = explainService(b, ns, svc.metadata.name, { packets });
        for (const n of r.nodes) {
          for (const p of n.ports) {
            for (const e of p.entryPoints) {
              for (const c of e.clients) {
                answers++;
                if (c.reason.trim() === "") empty.push(`${ns}/${svc.metadata.name} ${n.node} ${e.kind} ${c.client}: masquerade ${c.masquerade}`);
              }
            }
          }
        }
        for (const a of r.packet ?? []) {
          answers++;
          if (a.reason.trim() === "") empty.push(`${ns}/${svc.metadata.name} ${a.node} packet ${a.source} → ${a.destination}: masquerade ${a.masquerade}`);
        }
      }
      expect(answers).toBeGreaterThan(0);
      expect(empty).toEqual([]);
    });
  }
});

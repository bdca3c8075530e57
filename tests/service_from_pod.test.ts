// Issue 14 point 6: the client's node. `--from-pod` with `--from` resolves the pod from the bundle and traces on its
// node; a `--source` that is a pod of another node says where its packets are really handled.
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { NotFoundError, UsageError } from "../src/model/errors.ts";
import { explainService } from "../src/service/explain.ts";
import { packetFromPod } from "../src/service/from_pod.ts";
import { IPTABLES_LAB } from "./helpers/bundles.ts";

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: process.cwd() };
  return { code: await runCli(args, io), out, err };
}

const lab = readBundle(IPTABLES_LAB);

describe("--from-pod on a bundle", () => {
  it("the pod's IP is the source, every ServicePort at the ClusterIP a destination, its node the one traced", () => {
    const q = packetFromPod(lab.objects, "kube-system", "pod/coredns-78fcd69978-cvpx2", "kube-dns");
    expect(q).toEqual({
      packets: [
        { source: "10.244.0.5", destination: "10.96.0.10", port: 53, protocol: "udp" },
        { source: "10.244.0.5", destination: "10.96.0.10", port: 53, protocol: "tcp" },
        { source: "10.244.0.5", destination: "10.96.0.10", port: 9153, protocol: "tcp" },
      ],
      node: "k8s1",
      pod: "coredns-78fcd69978-cvpx2",
    });
  });
  it("without --dest every destination of the Service is traced on the pod's node, each with its own answer (it traced ports[0] only)", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2", "-o", "json"]);
    expect(r.code, r.err).toBe(0);
    const answers = JSON.parse(r.out).packet as { node: string; source: string; destination: string; endpoints: { endpoint: string }[]; caveats: string[] }[];
    expect(answers.map((a) => [a.node, a.source, a.destination])).toEqual([
      ["k8s1", "10.244.0.5", "10.96.0.10:53/udp"],
      ["k8s1", "10.244.0.5", "10.96.0.10:53/tcp"],
      ["k8s1", "10.244.0.5", "10.96.0.10:9153/tcp"],
    ]);
    // each packet is DNATed by its own ServicePort's chain, to the endpoints' port of that ServicePort
    expect(answers.map((a) => [...new Set(a.endpoints.map((e) => e.endpoint.replace(/^.*:/, "")))])).toEqual([["53"], ["53"], ["9153"]]);
    // each answer is the one a --dest question for it gives
    for (const a of answers) {
      const d = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2", "--dest", a.destination, "-o", "json"]);
      expect(JSON.parse(d.out).packet).toEqual([a]);
    }
    // the text answer names each destination on its node line
    const t = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2"]);
    expect(t.out.replace(/\n {2}/g, " ")).toMatch(/^Service kube-system\/kube-dns: packets from 10\.244\.0\.5 to 10\.96\.0\.10:53\/udp, 10\.96\.0\.10:53\/tcp, 10\.96\.0\.10:9153\/tcp\n/);
    expect(t.out.split("\n").filter((l) => l.startsWith("node k8s1 → ")).map((l) => l.split(":")[0] + ":" + l.split(":")[1])).toEqual([
      "node k8s1 → 10.96.0.10:53/udp",
      "node k8s1 → 10.96.0.10:53/tcp",
      "node k8s1 → 10.96.0.10:9153/tcp",
    ]);
  });
  it("a dual-stack Service: each port at each ClusterIP the pod has an address family of, with that family's source", () => {
    const ds = readBundle(new URL("./fixtures/dual-stack", import.meta.url).pathname);
    expect(packetFromPod(ds.objects, "default", "web-a", "web").packets).toEqual([
      { source: "10.244.0.7", destination: "10.96.100.10", port: 80, protocol: "tcp" },
      { source: "fd00:10:244::7", destination: "fd00:10:96::a", port: 80, protocol: "tcp" },
    ]);
    // a single-stack IPv4 pod cannot send to the IPv6 ClusterIP: its ClusterIP only
    const v4only = structuredClone(ds.objects);
    v4only.pods[0]!.status!.podIPs = [{ ip: "10.244.0.7" }];
    expect(packetFromPod(v4only, "default", "web-a", "web").packets).toEqual([{ source: "10.244.0.7", destination: "10.96.100.10", port: 80, protocol: "tcp" }]);
  });
  it("a --dest keeps its destination; only the source is the pod's", () => {
    const q = packetFromPod(lab.objects, "kube-system", "coredns-78fcd69978-cvpx2", "kube-dns", { source: "1.2.3.4", destination: "10.96.0.10", port: 9153, protocol: "tcp" });
    expect(q.packets).toEqual([{ source: "10.244.0.5", destination: "10.96.0.10", port: 9153, protocol: "tcp" }]);
  });
  it("a dual-stack pod: the source is its address of the destination's family (status.podIPs), never a mixed-family packet", () => {
    const ds = readBundle(new URL("./fixtures/dual-stack", import.meta.url).pathname);
    // the Service's first ClusterIP is IPv4: the pod's IPv4 address
    expect(packetFromPod(ds.objects, "default", "web-a", "web").packets[0]!.source).toBe("10.244.0.7");
    // an IPv6 destination: the pod's IPv6 address, not its podIP
    const q = packetFromPod(ds.objects, "default", "web-a", "web", { source: "x", destination: "fd00:10:96::a", port: 80, protocol: "tcp" });
    expect(q.packets[0]!.source).toBe("fd00:10:244::7");
    // a single-stack IPv4 pod asked about an IPv6 destination: refused, not traced as 10.x → fd00::
    const v4only = structuredClone(ds.objects);
    v4only.pods[0]!.status!.podIPs = [{ ip: "10.244.0.7" }];
    expect(() => packetFromPod(v4only, "default", "web-a", "web", { source: "x", destination: "fd00:10:96::a", port: 80, protocol: "tcp" }))
      .toThrow(/--from-pod web-a: the pod has no IPv6 address to send to fd00:10:96::a \(its addresses: 10\.244\.0\.7\); give --dest an address of its family/);
  });
  it("a pod the bundle lacks is not found (naming where one of that name is); one without IP is a usage error", () => {
    expect(() => packetFromPod(lab.objects, "default", "coredns-78fcd69978-cvpx2", "kube-dns")).toThrow(NotFoundError);
    // -n is the Service's namespace: the hint names the client pod the way --from-pod takes it
    expect(() => packetFromPod(lab.objects, "default", "coredns-78fcd69978-cvpx2", "kube-dns")).toThrow(/use --from-pod kube-system\/coredns-78fcd69978-cvpx2/);
    const copy = structuredClone(lab.objects);
    const pod = copy.pods.find((p) => p.metadata.name === "coredns-78fcd69978-cvpx2")!;
    // no address at all (podIPs holds the same addresses as podIP, one per family)
    delete pod.status!.podIP;
    delete pod.status!.podIPs;
    expect(() => packetFromPod(copy, "kube-system", "coredns-78fcd69978-cvpx2", "kube-dns")).toThrow(UsageError);
  });
  it("the CLI answers it (it used to ignore --from-pod with --from)", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2", "-o", "json"]);
    expect(r.code, r.err).toBe(0);
    const rep = JSON.parse(r.out);
    expect(rep.packet.map((a: { node: string; source: string; destination: string }) => [a.node, a.source, a.destination])).toEqual([
      ["k8s1", "10.244.0.5", "10.96.0.10:53/udp"],
      ["k8s1", "10.244.0.5", "10.96.0.10:53/tcp"],
      ["k8s1", "10.244.0.5", "10.96.0.10:9153/tcp"],
    ]);
  });
});

describe("--from-pod of another namespace, and with --dest", () => {
  it("NAMESPACE/NAME: an application pod asking for kube-system/kube-dns", () => {
    const q = packetFromPod(lab.objects, "kube-system", "default/nginx", "kube-dns");
    expect(q.pod).toBe("nginx");
    expect(q.packets[0]!.destination).toBe("10.96.0.10");
  });
  it("the CLI takes --from-pod with --dest (the pod's address is the source) and a NAMESPACE/NAME pod", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2", "--dest", "10.96.0.10:53/tcp", "-o", "json"]);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).packet.map((a: { source: string; destination: string }) => [a.source, a.destination])).toEqual([["10.244.0.5", "10.96.0.10:53/tcp"]]);
    // default/nginx runs on k8s3, which the bundle holds no capture of: resolved, and its node said to be missing
    const other = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "default/nginx", "-o", "json"]);
    expect(other.err).toMatch(/node k8s3: no datapath state was collected from this node/);
  });
  it("--from-pod with --source is a usage error (the pod gives the source)", async () => {
    const r = await run(["svc/kube-dns", "-n", "kube-system", "--from", IPTABLES_LAB, "--from-pod", "coredns-78fcd69978-cvpx2", "--source", "1.2.3.4", "--dest", "10.96.0.10:53"]);
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/^error: --from-pod gives the packet's source: leave out --source/)]);
  });
});

describe("a --source that is a pod of another node", () => {
  it("each answer on another node says where the packet really starts, and a finding says that node is not in the bundle", () => {
    const r = explainService(lab, "kube-system", "kube-dns", { packet: { source: "10.244.2.21", destination: "10.96.0.10", port: 53, protocol: "udp" } });
    expect(r.packet![0]!.node).toBe("k8s1");
    expect(r.packet![0]!.caveats).toContainEqual(expect.stringMatching(/^10\.244\.2\.21 is pod coredns-78fcd69978-hf5sj on node k8s2: its packets are first handled by k8s2's rules, not k8s1's/));
    expect(r.findings.find((f) => f.code === "ClientNodeNotTraced")?.message).toMatch(/on node k8s2, whose rules are not in the bundle/);
  });
  it("a pod of another namespace than the Service's is named as --from-pod takes it (NAMESPACE/NAME)", () => {
    const r = explainService(lab, "default", "kubernetes", { packet: { source: "10.244.2.21", destination: "10.96.0.1", port: 443, protocol: "tcp" } });
    // (and right when the question was --from-pod with --node: without --node it is traced where it starts)
    // (k8s2's rules are not in this bundle: the caveat says so rather than send the user to --node k8s2 on it)
    expect(r.packet![0]!.caveats.join("\n")).toContain(
      "(k8s2's rules were not collected: --node k8s2, or --from-pod kube-system/coredns-78fcd69978-hf5sj without --node, traces it where it starts on a live run, or on a bundle that holds k8s2)",
    );
  });
  it("a pod of the traced node gets no such caveat", () => {
    const r = explainService(lab, "kube-system", "kube-dns", { packet: { source: "10.244.0.5", destination: "10.96.0.10", port: 53, protocol: "udp" } });
    expect(r.packet![0]!.caveats.some((c) => c.includes("first handled by"))).toBe(false);
    expect(r.findings.some((f) => f.code === "ClientNodeNotTraced")).toBe(false);
  });
});

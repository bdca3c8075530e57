// Sort orders of report lists (src/model/order.ts): natural order for endpoints as the reports print them.
import { describe, expect, it } from "vitest";
import { compareCollated, compareNatural, compareText, sortCollated } from "../src/model/order.ts";
import { planCluster } from "../bench/cluster_plan.ts";

describe("compareNatural", () => {
  it("orders IPv4 endpoints by their numbers (seed 001's kube-dns and my-nginx-svc endpoints, shuffled)", () => {
    const eps = ["10.244.2.21:53", "10.244.0.5:53", "10.244.3.38:80", "10.244.0.10:53", "10.244.10.1:53", "10.244.0.5:9153"];
    expect([...eps].sort(compareNatural)).toEqual(["10.244.0.5:53", "10.244.0.5:9153", "10.244.0.10:53", "10.244.2.21:53", "10.244.3.38:80", "10.244.10.1:53"]);
  });
  it("agrees with localeCompare({ numeric: true }) on 1,000 generated IPv4 endpoints", () => {
    const eps: string[] = [];
    for (let i = 0; i < 1000; i++) eps.push(`10.${(i * 7) % 256}.${(i * 13) % 256}.${i % 256}:${8000 + (i % 5)}`);
    const ours = [...eps].sort(compareNatural);
    const icu = [...eps].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    expect(ours).toEqual(icu);
  });
  it("is total: zero padding and the text after the numbers decide ties", () => {
    expect(compareNatural("pod-07", "pod-7")).not.toBe(0);
    expect(Math.sign(compareNatural("pod-07", "pod-7"))).toBe(-Math.sign(compareNatural("pod-7", "pod-07")));
    expect(compareNatural("pod-2", "pod-10")).toBeLessThan(0);
    expect(compareNatural("a", "a")).toBe(0);
    expect(compareNatural("10.0.0.1:80", "10.0.0.1:8080")).toBeLessThan(0);
    expect(compareNatural("unknown (KUBE-SEP-X not in the dump)", "10.0.0.1:80")).toBeGreaterThan(0);
  });
});

describe("compareText", () => {
  it("is code-unit order", () => {
    expect(["nodes/b/x", "capture.yaml", "nodes/a/y", "Nodes"].sort(compareText)).toEqual(["Nodes", "capture.yaml", "nodes/a/y", "nodes/b/x"]);
  });
});

describe("compareCollated", () => {
  const sign = (n: number) => Math.sign(n);
  it("ranks its alphabet as the runtime's ICU root collation does", () => {
    const alphabet = [..."_-:./0123456789abcdefghijklmnopqrstuvwxyz"];
    expect([...alphabet].sort((a, b) => a.localeCompare(b))).toEqual(alphabet);
  });
  it("agrees in sign with localeCompare on 100,000 random pairs of Kubernetes-like names, and falls back outside them", () => {
    // A deterministic generator (LCG): short strings over the ranked alphabet, some with characters it does not rank
    // (upper case, space, `~`, é, a combining accent), so both paths are taken; many pairs share long prefixes.
    let seed = 12345;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const ranked = "_-:./0123456789abcdefghijklmnopqrstuvwxyz";
    const other = ["A", "Z", " ", "~", "\u00e9", "\u0301", "\u00df"];
    const word = () => {
      let s = "";
      for (let i = rnd(9); i > 0; i--) s += rnd(25) === 0 ? other[rnd(other.length)] : ranked[rnd(ranked.length)];
      return s;
    };
    let fallbacks = 0;
    for (let i = 0; i < 100_000; i++) {
      const a = word();
      const b = rnd(3) === 0 ? a + word() : rnd(2) === 0 ? a.slice(0, rnd(a.length + 1)) + word() : word();
      const want = sign(a.localeCompare(b));
      if (sign(compareCollated(a, b)) !== want) throw new Error(`compareCollated(${JSON.stringify(a)}, ${JSON.stringify(b)}) != ${want}`);
      if (/[^_\-:./0-9a-z]/.test(a + b)) fallbacks++;
    }
    expect(fallbacks).toBeGreaterThan(10_000);
  });
  it("sorts the ServicePort names of a generated 10,000-Service cluster exactly as localeCompare does", () => {
    const names = planCluster({ services: 10000 }).services.map((s) => `${s.namespace}/${s.name}:${s.portName}`);
    const icu = [...names].sort((a, b) => a.localeCompare(b));
    expect([...names].sort(compareCollated)).toEqual(icu);
    expect(sortCollated([...names], (n) => n)).toEqual(icu);
    // With one key it cannot rank (upper case), the whole list is sorted by localeCompare: still the same order.
    const mixed = [...names.slice(0, 500), "team-000/App-1:grpc", "Team-000/app-1:grpc"];
    expect(sortCollated([...mixed], (n) => n)).toEqual([...mixed].sort((a, b) => a.localeCompare(b)));
    // Stable: equal keys keep their order.
    const objs = ["b", "a", "b", "a"].map((k, i) => ({ k, i }));
    expect(sortCollated(objs, (o) => o.k).map((o) => o.i)).toEqual([1, 3, 0, 2]);
    expect(["ns1/svc10:p80", "ns1/svc1:p80", "ns1/svc-1", "ns1/svc"].sort(compareCollated)).toEqual(["ns1/svc", "ns1/svc-1", "ns1/svc1:p80", "ns1/svc10:p80"]);
  });
  it("keys of every length rank as localeCompare orders them (ranks made in one piece, longer than the buffer, past 8,192)", () => {
    const lengths = [1, 63, 64, 65, 200, 8192, 8193, 20000];
    const keys = lengths.flatMap((n) => ["a", "b", "-"].map((c, i) => `x${c.repeat(n)}${i % 2 === 0 ? "z" : "y"}`));
    keys.push(...keys.map((k) => k.slice(0, -1)));
    const icu = [...keys].sort((a, b) => a.localeCompare(b));
    expect(sortCollated([...keys].reverse(), (k) => k)).toEqual(icu);
    expect(sortCollated(keys.filter((k) => k.length <= 8192).reverse(), (k) => k)).toEqual(icu.filter((k) => k.length <= 8192));
  });
});

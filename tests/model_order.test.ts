// Sort orders of report lists (src/model/order.ts): natural order for endpoints as the reports print them.
import { describe, expect, it } from "vitest";
import { compareNatural, compareText } from "../src/model/order.ts";

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

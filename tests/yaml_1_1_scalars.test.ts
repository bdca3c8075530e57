// -o yaml is read by YAML 1.1 readers too (PyYAML, go-yaml v2 under sigs.k8s.io/yaml, js-yaml): a string they would
// take for a bool, a number, a timestamp or null must be quoted, as kubectl's output quotes it, or the YAML does not
// read back as the JSON's data (label values `yes`/`on`/`1_000`, every Event time). Checked with the project's `yaml`
// library in both its 1.2 (core) and 1.1 schemas.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readBundle } from "../src/io/read_bundle.ts";
import { serializeExact } from "../src/model/exact_serialize.ts";
import { explainPending } from "../src/pending/explain.ts";
import { serializeReport } from "../src/report/serialize.ts";
import { explainService } from "../src/service/explain.ts";

/** Strings YAML 1.1 resolves to another type (https://yaml.org/type/: bool, int, float, null, timestamp, merge, value). */
const TRICKY = [
  "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", "true", "False",
  "1_000", "-1_000", "0b1010", "012", "0x_1F", "190:20:30", "1_000.5", "6.8523015e+5", "190:20:30.15", ".inf", "-.Inf", ".NaN",
  "~", "null", "Null", "", "2024-01-01", "2018-12-30T13:10:02Z", "2001-12-14 21:59:43.10 -5", "<<", "=",
  // 1.2 core only
  "0o17", "1e3",
];

const readBack = (text: string) => ({ v12: parse(text), v11: parse(text, { version: "1.1" }) });

describe("serializeExact yaml: strings a YAML 1.1 reader would retype are quoted", () => {
  it("each value and key reads back as the same string in YAML 1.2 and 1.1", () => {
    const value = { values: Object.fromEntries(TRICKY.map((s, i) => [`k${i}`, s])), keys: Object.fromEntries(TRICKY.map((s) => [s, s])), list: TRICKY };
    const text = serializeExact(value, "yaml");
    const { v12, v11 } = readBack(text);
    expect(v12).toEqual(value);
    expect(v11).toEqual(value);
    expect(text).toContain('k0: "yes"');
    expect(text).toContain('"2018-12-30T13:10:02Z"');
  });

  it("numbers, booleans and null stay what they are", () => {
    const value = { num: 1000, f: 0.5, t: true, z: null, plain: "web-7d9f-3", ip: "10.96.0.10:53/udp" };
    const text = serializeExact(value, "yaml");
    expect(text).toBe("num: 1000\nf: 0.5\nt: true\nz: null\nplain: web-7d9f-3\nip: 10.96.0.10:53/udp\n");
    expect(readBack(text).v11).toEqual(value);
  });
});

describe("reports", () => {
  it("a Service selector of label values yes, on, 1_000, 2024-01-01", () => {
    const b = readBundle("examples/iptables-lab");
    const svc = b.objects.services.find((s) => s.metadata.name === "my-nginx-svc")!;
    svc.spec!.selector = { ...svc.spec!.selector, canary: "yes", tier: "on", build: "1_000", release: "2024-01-01" };
    const r = explainService(b, "default", "my-nginx-svc");
    const { v12, v11 } = readBack(serializeReport(r, "yaml"));
    const json = JSON.parse(serializeReport(r, "json"));
    expect(v12).toEqual(json);
    expect(v11).toEqual(json);
    expect(v11.service.selector).toMatchObject({ canary: "yes", tier: "on", build: "1_000", release: "2024-01-01" });
  });

  it("a FailedScheduling event's time (examples/azure-zones)", () => {
    const r = explainPending(readBundle("examples/azure-zones"), { kind: "pod", namespace: "default", name: "busybox" });
    const text = serializeReport(r, "yaml");
    expect(text).toMatch(/lastSeen: "2018-12-30T13:10:02Z"/);
    const json = JSON.parse(serializeReport(r, "json"));
    expect(readBack(text).v11).toEqual(json);
  });
});

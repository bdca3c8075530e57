// Text wrapped for the terminal keeps its indentation with colour on: a styled line opens with an escape code, then
// its spaces, and its continuation lines were indented from column 0 (2 columns less than without colour). The
// whole report, coloured then stripped of its codes, equals the plain report.
import { describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { explainService } from "../src/service/explain.ts";
import { renderServiceText } from "../src/report/service_text.ts";
import { wrapText } from "../src/report/style.ts";

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

describe("wrapText with colour codes", () => {
  it("a line that starts with a colour code keeps its indent on continuation lines", () => {
    const line = "\x1b[2m    externalTrafficPolicy Cluster, internalTrafficPolicy Cluster, sessionAffinity None\x1b[0m";
    expect(strip(wrapText(line, 40)).split("\n")).toEqual(strip(wrapText(strip(line), 40)).split("\n"));
    expect(strip(wrapText(line, 40)).split("\n")[1]).toMatch(/^ {6}\S/);
  });

  it("the iptables-lab report, coloured and stripped, is the plain report", () => {
    const r = explainService(readBundle("examples/iptables-lab"), "kube-system", "kube-dns");
    const plain = wrapText(renderServiceText(r, { color: false }), 80);
    const colour = wrapText(renderServiceText(r, { color: true }), 80);
    expect(colour).not.toBe(plain);
    expect(strip(colour)).toBe(plain);
  });
});

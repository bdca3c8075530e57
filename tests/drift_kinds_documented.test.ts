// Every drift kind the report can carry (src/service/report.ts DriftItem["kind"]) is named in docs/report.md, the
// report's schema for scripts: a kind added to a producer without its meaning there (as entry-missing once was
// folded into service-missing, undocumented) fails here.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (rel: string) => readFileSync(new URL(`../${rel}`, import.meta.url), "utf8");

describe("drift kinds", () => {
  const src = read("src/service/report.ts");
  const union = /export interface DriftItem \{[\s\S]*?kind:\s*([\s\S]*?);/.exec(src)![1]!;
  const kinds = [...union.matchAll(/"([a-z-]+)"/g)].map((m) => m[1]!);
  const doc = read("docs/report.md");

  it("the union is read", () => {
    expect(kinds).toContain("service-missing");
    expect(kinds).toContain("entry-missing");
  });
  it.each(kinds)("%s is documented in docs/report.md's drift list", (kind) => {
    expect(doc).toContain(`\`${kind}\``);
  });
});

// Progress of a multi-node collection (issue 17): on a terminal, each node's steps and "nodes k/N done" with the
// slowest node; silent otherwise.
import { describe, expect, it } from "vitest";
import { nodeProgress } from "../src/kube/progress.ts";

describe("nodeProgress", () => {
  it("counts nodes done out of the total and names the slowest so far", () => {
    let t = 0;
    const lines: string[] = [];
    const p = nodeProgress(3, (l) => void lines.push(l), true, () => t);
    p.started("a");
    p.started("b");
    p.started("c");
    p.step("a", "collecting");
    t = 1200;
    p.ended("b", false);
    t = 4200;
    p.ended("a", true);
    t = 4300;
    p.ended("c", false);
    expect(lines).toEqual([
      "node a: collecting\n",
      "nodes 1/3 done; slowest so far: b (1.2 s)\n",
      "nodes 2/3 done (1 failed); slowest so far: a (4.2 s)\n",
      "nodes 3/3 done (1 failed); slowest so far: c (4.3 s)\n",
    ]);
  });
  it("one node: its steps only", () => {
    const lines: string[] = [];
    const p = nodeProgress(1, (l) => void lines.push(l), true, () => 0);
    p.started("a");
    p.step("a", "collecting");
    p.ended("a", false);
    expect(lines).toEqual(["node a: collecting\n"]);
  });
  it("silent when stderr is not a terminal", () => {
    const lines: string[] = [];
    const p = nodeProgress(5, (l) => void lines.push(l), false);
    p.started("a");
    p.step("a", "collecting");
    p.ended("a", false);
    expect(lines).toEqual([]);
  });
});

// Live collection is library API (issue 11): mod.ts's gatherBundle, given a plain GatherRequest, reads the cluster of a
// kubeconfig and returns the Bundle explainService takes — no CLI involved. Against the fake API server, API side only.
import { afterEach, describe, expect, it } from "vitest";
import { explainService, gatherBundle, type GatherIo, NotFoundError } from "../mod.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";

const web = readBundle("tests/fixtures/live/web");
let servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});

function io(): GatherIo & { err: string[] } {
  const err: string[] = [];
  return { err, stdout: () => {}, stderr: (t) => void err.push(t), env: {}, stderrIsTTY: false, cwd: process.cwd() };
}

describe("gatherBundle from mod.ts", () => {
  it("returns the Bundle and the completed question; explainService answers from it", async () => {
    const s = await startFakeApiServer({ objects: web.objects, contextNamespace: "default" });
    servers.push(s);
    const got = await gatherBundle({ target: { kind: "service", name: "web" }, kubeconfig: s.kubeconfig, exec: false }, io());
    expect(got.namespace).toBe("default");
    expect(got.bundle.objects.services.map((x) => x.metadata.name)).toEqual(["web"]);
    expect(got.bundle.nodes).toEqual([]);
    const report = explainService(got.bundle, got.namespace, "web");
    expect(report.service.clusterIPs).toEqual(["10.96.119.228"]);
    expect(report.endpoints.length).toBeGreaterThan(0);
  });
  it("throws its own errors, not CLI exit codes", async () => {
    const s = await startFakeApiServer({ objects: web.objects });
    servers.push(s);
    await expect(gatherBundle({ target: { kind: "service", name: "nope" }, namespace: "default", kubeconfig: s.kubeconfig, exec: false }, io()))
      .rejects.toBeInstanceOf(NotFoundError);
  });
});

// Audit roundtrip finding 4: `svc/web --from BUNDLE --from-pod client`, BUNDLE captured without --from-pod, said
// `pod "client" not found in namespace "shop"` although the pod exists: a capture reads the Service's endpoint pods,
// and the client pod only with --from-pod (src/kube/gather_api.ts). The error now says the bundle lacks it and how to
// capture it, as `--node` does for a node the bundle lacks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { NotFoundError } from "../src/model/errors.ts";
import { packetFromPod } from "../src/service/from_pod.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const T = mkdtempSync(join(tmpdir(), "netpath-from-pod-"));
const servers: FakeApiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(T, { recursive: true, force: true });
});

async function capture(name: string, flags: string[]): Promise<string> {
  const s = await startFakeApiServer({ objects: readBundle("tests/fixtures/live/web").objects });
  servers.push(s);
  const out = join(T, name);
  const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", ...flags, "-o", out]);
  expect(c.code, c.stderr).toBe(0);
  return out;
}

describe("--from-pod on a bundle that does not hold the pod", () => {
  it("captured without --from-pod: the bundle lacks the pod (it exists in the cluster), capture with --from-pod client", async () => {
    const f = await capture("web.json", []);
    const r = await run(["svc/web", "-n", "default", "--from", f, "--from-pod", "client"]);
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: 'error: --from-pod client: the bundle holds no pod "client" in namespace "default" (it was captured without --from-pod: kubectl netpath svc/web -n default --no-exec); a bundle holds the Service\'s endpoint pods and the client pod it was captured with: capture with --from-pod client to include it\n',
    });
  });

  it("captured with --from-pod client: the pod is in the bundle and answered", async () => {
    const f = await capture("web-fp.json", ["--from-pod", "client"]);
    const r = await run(["svc/web", "-n", "default", "--from", f, "--from-pod", "client", "-o", "json"]);
    expect(r.stderr).not.toMatch(/holds no pod/);
    expect(Array.isArray((JSON.parse(r.stdout) as { packet: unknown[] }).packet)).toBe(true); // --no-exec: no node traced
    const b = readBundle(f);
    const q = packetFromPod(b.objects, "default", "client", "web", undefined, b.capture);
    expect([q.packets[0]!.source, q.node]).toEqual(["10.244.2.9", "k8s-guide-worker2"]);
  });

  it("a hand-made bundle: the same sentence, without a capture command to quote; still a NotFoundError (exit 1)", () => {
    const b = readBundle("tests/fixtures/live/web");
    const objects = { ...b.objects, pods: b.objects.pods.filter((p) => p.metadata.name !== "client") };
    expect(() => packetFromPod(objects, "default", "client", "web", undefined, { command: "hand-built" })).toThrow(NotFoundError);
    expect(() => packetFromPod(objects, "default", "client", "web", undefined, { command: "hand-built" }))
      .toThrow('--from-pod client: the bundle holds no pod "client" in namespace "default"; a bundle holds the Service\'s endpoint pods and the client pod it was captured with: capture with --from-pod client to include it');
  });
});

// The pods kubectl-netpath creates are pinned by digest (src/kube/debug_pod.ts DEFAULT_IMAGE). `--image` lets users
// pick their own image, so a tag-only one is accepted, but with a warning on stderr naming the risk (a moved tag runs
// other content, privileged, on every node) and the digest form to use (src/kube/live.ts unpinnedImageWarning).
import { afterEach, describe, expect, it } from "vitest";
import { readBundle } from "../src/io/read_bundle.ts";
import { DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
import { liveSettings, unpinnedImageWarning } from "../src/kube/live.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const web = readBundle("tests/fixtures/live/web");
const DIGEST = "a20c2531bf35436ed3766cd6cfe89d352b050ccc4d7005ce6400adf97503da1b";
const WARNING =
  "warning: --image nicolaka/netshoot:v0.13 is not pinned by digest: its tag can be moved to other content, which the debug pods would then run with NET_ADMIN (or SYS_ADMIN) on each node; pin it as nicolaka/netshoot:v0.13@sha256:<digest> (the digest as `crane digest nicolaka/netshoot:v0.13` or `docker buildx imagetools inspect nicolaka/netshoot:v0.13` prints it)\n";

let servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});

describe("--image without a digest", () => {
  it("a tag, a bare name or a registry with a port is unpinned; a digest (with or without a tag) is pinned", () => {
    for (const i of ["nicolaka/netshoot:v0.13", "busybox", "registry.local:5000/tools/net:1.2", `nicolaka/netshoot:sha256-${DIGEST}`]) {
      expect(unpinnedImageWarning(i), i).toMatch(/is not pinned by digest/);
      expect(liveSettings({ image: i }).imageWarning).toBe(unpinnedImageWarning(i));
    }
    for (const i of [DEFAULT_IMAGE, `nicolaka/netshoot@sha256:${DIGEST}`, `registry.local:5000/net@sha256:${DIGEST}`]) expect(unpinnedImageWarning(i), i).toBeUndefined();
    expect(liveSettings({}).imageWarning).toBeUndefined();
  });

  it("a dry run with a tag-only --image warns on stderr and still prints the debug pod with that image", async () => {
    const s = await startFakeApiServer({ objects: web.objects });
    servers.push(s);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--via", "debug-pod", "--image", "nicolaka/netshoot:v0.13"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split(/(?<=\n)/).filter((l) => l.includes("--image"))).toEqual([WARNING]);
    expect(r.stdout).toContain("image: nicolaka/netshoot:v0.13\n");
    // pinned: no warning; --via kube-proxy creates no pod: no warning
    const pinned = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--image", `nicolaka/netshoot@sha256:${DIGEST}`]);
    expect(pinned.stderr).not.toContain("not pinned");
    const kp = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--via", "kube-proxy", "--image", "busybox"]);
    expect(kp.stderr).not.toContain("not pinned");
  });
});

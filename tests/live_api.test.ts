// The live path against the fake API server, API side (no node exec needed): what is asked for and how often,
// kubeconfig and authentication (bearer token, client certificate), human error messages for every failure the
// user can meet (401, TLS, unreachable, 403, 404, 500, timeouts, Pod Security, image pull, pod start timeout,
// NotReady node), pagination, the request count on a 5,000-node / 50,000-pod cluster, --dry-run, capture, cleanup.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { EndpointSlice, Node, Pod } from "../src/model/k8s.ts";
import { type FakeApiOptions, type FakeApiServer, type RecordedRequest, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { makePki } from "./helpers/fake_pki.ts";
import { DEFAULT_IMAGE } from "../src/kube/debug_pod.ts";
import { gatherBundle } from "../src/kube/live.ts";
import { captureIo, run, runLiveCli } from "./helpers/live_cli.ts";
import { shellWord } from "../src/model/shell_word.ts";

const web = readBundle("tests/fixtures/live/web");
const lab = readBundle("examples/iptables-lab");

let servers: FakeApiServer[] = [];
async function fake(o: FakeApiOptions = {}): Promise<FakeApiServer> {
  const s = await startFakeApiServer({ objects: web.objects, ...o });
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers) {
    expect(s.debugPods(), "debug pods leaked").toEqual([]);
    await s.close();
  }
  servers = [];
});

/** The default debug image as a regular expression source. */
const IMG = DEFAULT_IMAGE.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const line = (r: RecordedRequest) => `${r.method} ${r.path}${Object.keys(r.query).length ? "?" + Object.entries(r.query).map(([k, v]) => `${k}=${v.join("|")}`).join("&") : ""}`;

describe("what svc/NAME asks the API server (--no-exec)", () => {
  it("exactly: the Service, its EndpointSlices by label, each endpoint pod, each endpoint node, the kube-proxy DaemonSet and ConfigMap", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.stderr).toBe("warning: the bundle holds no node state: only the API side was analysed\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Service default/web  type NodePort  ClusterIP 10.96.119.228");
    expect(s.requests.map(line)).toEqual([
      "GET /api/v1/namespaces/default/services/web",
      "GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name=web&limit=500",
      "GET /api/v1/namespaces/default/pods/web-96d5df5c8-6bgpr",
      "GET /api/v1/namespaces/default/pods/web-96d5df5c8-wkfrb",
      "GET /api/v1/nodes/k8s-guide-worker",
      "GET /api/v1/nodes/k8s-guide-worker2",
      "GET /apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
      // no kube-proxy DaemonSet here: the cluster's DaemonSets, by name, say which agent serves Services (issue 15)
      "GET /apis/apps/v1/daemonsets?limit=500",
      "GET /api/v1/namespaces/kube-system/configmaps/kube-proxy",
    ]);
    expect(new Set(s.requests.map((x) => x.user))).toEqual(new Set(["token-user"]));
  });

  it("the context's namespace is the default; a client certificate authenticates", async () => {
    const s = await fake({ contextNamespace: "default" });
    const r = await run(["svc/web", "--kubeconfig", s.kubeconfigCert, "--no-exec"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Service default/web");
    expect(s.requests[0]!.user).toBe("cert-user");
    expect(s.requests[0]!.path).toBe("/api/v1/namespaces/default/services/web");
  });

  it("KUBECONFIG with several files: the first defining the context wins", async () => {
    const s = await fake();
    const dir = mkdtempSync(join(tmpdir(), "knp-kc-"));
    const first = join(dir, "first");
    writeFileSync(first, JSON.stringify({ "current-context": "fake", contexts: [{ name: "fake", context: { cluster: "fake", user: "token-user", namespace: "default" } }], clusters: [], users: [] }));
    const r = await run(["svc/web", "--no-exec"], { KUBECONFIG: `${first}:${s.kubeconfig}:${join(dir, "missing")}` });
    expect(r.code).toBe(0);
    expect(s.requests[0]!.path).toBe("/api/v1/namespaces/default/services/web");
  });

  it("--from-pod: the client pod and its node are read too", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "--from-pod", "pod/client"]);
    expect(r.code).toBe(0);
    expect(s.requests.map(line)).toContain("GET /api/v1/namespaces/default/pods/client");
    expect(s.requests.filter((x) => x.path.startsWith("/api/v1/nodes/")).map((x) => x.path)).toEqual(["/api/v1/nodes/k8s-guide-worker", "/api/v1/nodes/k8s-guide-worker2"]);
  });

  it("--from-pod without --dest asks one packet per ServicePort, each with the pod's address (it asked the first port only)", async () => {
    const objects = structuredClone(web.objects);
    objects.services[0]!.spec.ports!.push({ name: "dns", port: 53, protocol: "UDP", targetPort: 53 });
    const s = await fake({ objects });
    const io = captureIo({});
    const got = await gatherBundle({ target: { kind: "service", name: "web" }, namespace: "default", kubeconfig: s.kubeconfig, exec: false, fromPod: "client" }, io);
    const clusterIP = objects.services[0]!.spec.clusterIP!;
    expect(got.packets).toEqual([
      { source: "10.244.2.9", destination: clusterIP, port: 80, protocol: "tcp" },
      { source: "10.244.2.9", destination: clusterIP, port: 53, protocol: "udp" },
    ]);
    // with --dest: that packet only, its source the pod's
    const one = await gatherBundle({ target: { kind: "service", name: "web" }, namespace: "default", kubeconfig: s.kubeconfig, exec: false, fromPod: "client", packet: { source: "", destination: clusterIP, port: 53, protocol: "udp" } }, io);
    expect(one.packets).toEqual([{ source: "10.244.2.9", destination: clusterIP, port: 53, protocol: "udp" }]);
  });
});

describe("--dest at another node's address: that node is read and collected too", () => {
  // kube-proxy takes a NodePort only for packets addressed to the node itself (pkg/proxy/iptables/proxier.go, the
  // "kubernetes service nodeports" rule `-m addrtype --dst-type LOCAL`): the client's node routes the packet out
  // unchanged and the destination's node translates it, so both are collected (tests/live_e2e.test.ts answers on both)
  const nodesOf = (stdout: string) => [...stdout.matchAll(/^ {2}nodeName: (\S+)$/gm)].map((m) => m[1]);
  it("a node with no endpoint (the control plane): found by one list of the Nodes, collected after the client's", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", "192.168.224.2:31730/tcp", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(nodesOf(r.stdout)).toEqual(["k8s-guide-worker2", "k8s-guide-control-plane"]);
    expect(s.requests.map(line)).toContain("GET /api/v1/nodes?limit=500");
    const io = captureIo({});
    const got = await gatherBundle({ target: { kind: "service", name: "web" }, namespace: "default", kubeconfig: s.kubeconfig, exec: false, fromPod: "client", packet: { source: "", destination: "192.168.224.2", port: 31730, protocol: "tcp" } }, io);
    expect(got.bundle.objects.nodes.map((n) => n.metadata.name)).toEqual(["k8s-guide-control-plane", "k8s-guide-worker", "k8s-guide-worker2"]);
  });

  it("an endpoint's node, already read: no list; a ClusterIP: no list, no node added", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", "192.168.224.4:31730/tcp", "--dry-run"]);
    expect(nodesOf(r.stdout)).toEqual(["k8s-guide-worker2", "k8s-guide-worker"]);
    const c = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", "10.96.119.228:80/tcp", "--dry-run"]);
    expect(nodesOf(c.stdout)).toEqual(["k8s-guide-worker2"]);
    expect(s.requests.map(line).filter((l) => l.startsWith("GET /api/v1/nodes?"))).toEqual([]);
  });

  it("--node chosen: the destination's Node is read (its answer names it) but not collected", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker2", "--source", "10.244.2.9", "--dest", "192.168.224.2:31730/tcp", "--dry-run"]);
    expect(nodesOf(r.stdout)).toEqual(["k8s-guide-worker2"]);
    expect(s.requests.map(line)).toContain("GET /api/v1/nodes?limit=500");
  });

  it("listing Nodes forbidden: a warning, and the client's node alone", async () => {
    const s = await fake({ denials: [{ verb: "list", resource: "nodes" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", "192.168.224.2:31730/tcp", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(nodesOf(r.stdout)).toEqual(["k8s-guide-worker2"]);
    const n = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--from-pod", "client", "--dest", "192.168.224.2:31730/tcp", "--no-exec"]);
    expect(n.stderr).toContain("warning: list nodes is forbidden (403): whether --dest 192.168.224.2 is an address of a node (whose rules would handle the packet) is not known\n");
  });
});

describe("the number of API requests does not grow with the cluster", () => {
  it("svc/web on 5,000 nodes and 50,000 pods asks exactly what it asks on a 3-node cluster", async () => {
    const small = await fake();
    const big = await fake({ synthetic: { nodes: 5000, podsPerNode: 10 } });
    const a = await run(["svc/web", "-n", "default", "--kubeconfig", small.kubeconfig, "--no-exec"]);
    const t = Date.now();
    const b = await run(["svc/web", "-n", "default", "--kubeconfig", big.kubeconfig, "--no-exec"]);
    const ms = Date.now() - t;
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(big.requests.map(line)).toEqual(small.requests.map(line));
    expect(big.requests.length).toBe(9);
    console.info(`[live-api] svc/web --no-exec on 5,000 nodes / 50,000 pods: ${big.requests.length} API requests, ${ms} ms`);
  });

  it("--all-nodes is the one question about every node: nodes are listed in pages of 500", async () => {
    const big = await fake({ synthetic: { nodes: 5000, podsPerNode: 10 } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", big.kubeconfig, "--no-exec", "--all-nodes", "-o", "json"]);
    expect(r.code).toBe(0);
    const lists = big.requests.filter((x) => x.path === "/api/v1/nodes");
    expect(lists.length).toBe(11); // 5,003 nodes in pages of 500
    expect(lists.every((x) => x.query.limit?.[0] === "500")).toBe(true);
    expect(lists.slice(1).every((x) => x.query.continue !== undefined)).toBe(true);
  });

  it("a Service with 600 endpoints: EndpointSlices and pods are paginated, pods listed by the Service's selector", async () => {
    const nodes = web.objects.nodes;
    const slices: EndpointSlice[] = [];
    const pods: Pod[] = [];
    for (let i = 0; i < 600; i++) {
      const node = nodes[1 + (i % 2)]!.metadata.name;
      // 600 distinct addresses, each a valid IPv4 address (10.244.<node><hundred>.<10–109>)
      const ip = `10.244.${1 + (i % 2)}${Math.floor(i / 200)}.${10 + (Math.floor(i / 2) % 100)}`;
      slices.push({ apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", metadata: { name: `many-${i}`, namespace: "default", labels: { "kubernetes.io/service-name": "many" } }, addressType: "IPv4", endpoints: [{ addresses: [ip], nodeName: node, conditions: { ready: true }, targetRef: { kind: "Pod", name: `many-${i}`, namespace: "default" } }], ports: [{ name: "", port: 8080, protocol: "TCP" }] });
      pods.push({ apiVersion: "v1", kind: "Pod", metadata: { name: `many-${i}`, namespace: "default", labels: { app: "many" } }, spec: { nodeName: node }, status: { phase: "Running", podIP: ip } });
    }
    const svc = { ...web.objects.services[0]!, metadata: { name: "many", namespace: "default" }, spec: { type: "ClusterIP" as const, clusterIP: "10.96.7.7", selector: { app: "many" }, ports: [{ port: 80, targetPort: 8080, protocol: "TCP" as const }] } };
    const s = await fake({ objects: { services: [svc], endpointSlices: slices, pods, nodes } });
    const r = await run(["svc/many", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).endpoints.length).toBe(600);
    expect(s.requests.map(line)).toEqual([
      "GET /api/v1/namespaces/default/services/many",
      "GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name=many&limit=500",
      "GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name=many&limit=500&continue=NTAw",
      "GET /api/v1/namespaces/default/pods?labelSelector=app=many&limit=500",
      "GET /api/v1/namespaces/default/pods?labelSelector=app=many&limit=500&continue=NTAw",
      "GET /api/v1/nodes/k8s-guide-worker",
      "GET /api/v1/nodes/k8s-guide-worker2",
      "GET /apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
      "GET /apis/apps/v1/daemonsets?limit=500",
      "GET /api/v1/namespaces/kube-system/configmaps/kube-proxy",
      // No kube-proxy ConfigMap (and no DaemonSet naming one): EKS's name is tried next.
      "GET /api/v1/namespaces/kube-system/configmaps/kube-proxy-config",
    ]);
  });
});

describe("errors a user can meet, in words", () => {
  it("401: a wrong token", async () => {
    const s = await fake();
    const kc = readFileSync(s.kubeconfig, "utf8").replace("fake-token-0123456789", "expired");
    const p = join(s.dir, "bad-token");
    writeFileSync(p, kc);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", p, "--no-exec"]);
    expect(r.code).toBe(1);
    // the kubectl command suggested reads the same kubeconfig
    expect(r.stderr).toBe(`error: the API server ${s.url} rejected the credentials of context "fake" (user "token-user") (401 Unauthorized): log in again or refresh the token, then check with \`kubectl --kubeconfig ${p} --context fake auth whoami\`\n`);
  });

  it("a context without a user: the cluster's CA is still used (TLS succeeds), and the server's 401 says what is missing", async () => {
    const s = await fake();
    const kc = JSON.parse(readFileSync(s.kubeconfig, "utf8"));
    delete kc.contexts[0].context.user;
    const p = join(s.dir, "no-user");
    writeFileSync(p, JSON.stringify(kc));
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", p, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: the API server ${s.url} rejected the credentials of context "fake" (401 Unauthorized): log in again or refresh the token, then check with \`kubectl --kubeconfig ${p} --context fake auth whoami\`\n`);
    expect(s.requests.length).toBe(1);
  });

  // client-go retries a 429 (or a 5xx) that carries Retry-After, up to 10 times, within its request timeout
  // (k8s.io/client-go/rest/with_retry.go); API Priority and Fairness answers a rejected request that way
  const THROTTLED = "Too many requests, please try again later.";
  const svcGets = (s: FakeApiServer) => s.requests.filter((x) => x.path === "/api/v1/namespaces/default/services/web").length;

  it("429 with Retry-After: the request is sent again after the wait, and the run answers", async () => {
    const s = await fake({ faults: [{ path: /\/services\/web$/, status: 429, message: THROTTLED, retryAfterSeconds: 1, times: 2 }] });
    const t = Date.now();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.stderr).toBe("warning: the bundle holds no node state: only the API side was analysed\n");
    expect(r.code).toBe(0);
    expect(svcGets(s)).toBe(3);
    expect(Date.now() - t).toBeGreaterThanOrEqual(2000);
  });

  it("429 with Retry-After every time: 10 retries, then one line (no --parallel for an API read)", async () => {
    const s = await fake({ faults: [{ path: /\/services\/web$/, status: 429, message: THROTTLED, retryAfterSeconds: 0 }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(svcGets(s)).toBe(11);
    expect(r.stderr).toBe(`error: the API server is throttling requests (429 TooManyRequests: ${THROTTLED}) while trying to get services "web" in namespace "default", when it asks to wait (Retry-After) the request is retried, up to 10 times within --request-timeout: try again later\n`);
  });

  it("429 whose Retry-After outlasts --request-timeout: not waited for", async () => {
    const s = await fake({ faults: [{ path: /\/services\/web$/, status: 429, message: THROTTLED, retryAfterSeconds: 5 }] });
    const t = Date.now();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "--request-timeout", "2s"]);
    expect(r.code).toBe(1);
    expect(svcGets(s)).toBe(1);
    expect(Date.now() - t).toBeLessThan(2000);
  });

  it("503 with Retry-After to a GET is retried", async () => {
    const s = await fake({ faults: [{ path: /\/services\/web$/, status: 503, message: "the server is shutting down", retryAfterSeconds: 0, times: 1 }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(0);
    expect(svcGets(s)).toBe(2);
  });

  it("429 on the debug pod's create during node collection: retried; exhausted, the node names --parallel", async () => {
    const s = await fake({ kubeProxyPods: false, faults: [{ method: "POST", path: /\/namespaces\/kube-system\/pods$/, status: 429, message: THROTTLED, retryAfterSeconds: 0 }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length).toBe(11);
    expect(r.stderr).toContain(`error: node k8s-guide-worker: the API server is throttling requests (429 TooManyRequests: ${THROTTLED}) while trying to create pods in namespace "kube-system", when it asks to wait (Retry-After) the request is retried, up to 10 times within --request-timeout: try again later, or lower --parallel;`);
  });

  it("TLS: the kubeconfig trusts another CA", async () => {
    const s = await fake();
    const other = makePki({ user: "x" }, "node:crypto");
    const kc = JSON.parse(readFileSync(s.kubeconfig, "utf8"));
    kc.clusters[0].cluster["certificate-authority-data"] = Buffer.from(other.caCert).toString("base64");
    const p = join(s.dir, "other-ca");
    writeFileSync(p, JSON.stringify(kc));
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", p, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: TLS with the API server ${s.url.replace(/\./g, "\\.")} failed: .*; check certificate-authority\\(-data\\) and the server address of the cluster of context "fake" in your kubeconfig\\n$`));
    expect(s.requests).toEqual([]);
  });

  it("the API server is not there", async () => {
    const port = await new Promise<number>((res) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => res(p));
      });
    });
    const s = await fake();
    const kc = readFileSync(s.kubeconfig, "utf8").replace(s.url, `https://127.0.0.1:${port}`);
    const p = join(s.dir, "down");
    writeFileSync(p, kc);
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", p, "--no-exec"]);
    expect(r.code).toBe(1);
    // with --kubeconfig the suggested command repeats it: without it kubectl would ask another cluster (or find no
    // context "fake")
    expect(r.stderr).toBe(`error: cannot reach the API server https://127.0.0.1:${port} (connection refused): is the cluster running and is context "fake" the right one? (kubectl --kubeconfig ${p} --context fake cluster-info)\n`);
    // a file name with shell syntax is quoted as one word
    const spaced = join(s.dir, "my cluster's config");
    writeFileSync(spaced, kc);
    const q = await run(["svc/web", "-n", "default", "--kubeconfig", spaced, "--no-exec"]);
    expect(q.stderr).toContain(`(kubectl --kubeconfig ${shellWord(spaced)} --context fake cluster-info)\n`);
    expect(shellWord(spaced)).not.toBe(spaced);
    // from KUBECONFIG, a kubectl run in the same shell reads the same files: no --kubeconfig
    const env = await run(["svc/web", "-n", "default", "--no-exec"], { KUBECONFIG: p });
    expect(env.stderr).toBe(`error: cannot reach the API server https://127.0.0.1:${port} (connection refused): is the cluster running and is context "fake" the right one? (kubectl --context fake cluster-info)\n`);
  });

  it.each([
    { name: "no kubeconfig at all", argv: [], env: { HOME: "/nonexistent-home" }, want: "error: no kubeconfig found (KUBECONFIG is unset and /nonexistent-home/.kube/config does not exist, and this is not a pod): pass --kubeconfig FILE, or analyse a saved bundle with --from\n" },
    { name: "--kubeconfig missing", argv: ["--kubeconfig", "/nonexistent/kc"], env: {}, want: "error: --kubeconfig /nonexistent/kc: no such file\n" },
  ])("$name", async ({ argv, env, want }) => {
    const r = await run(["svc/web", "--no-exec", ...argv], env);
    expect(r).toEqual({ code: 1, stdout: "", stderr: want });
  });

  it("an unknown --context lists the contexts there are", async () => {
    const s = await fake();
    const r = await run(["svc/web", "--kubeconfig", s.kubeconfig, "--context", "prod", "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: context "prod" not found in kubeconfig ${s.kubeconfig} (contexts: fake)\n`);
  });

  it("a Service that is elsewhere: says which namespace", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "shop", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: service "web" not found in namespace "shop"; it exists in namespace "default": use -n default\n');
    expect(s.requests.map(line)).toEqual(["GET /api/v1/namespaces/shop/services/web", "GET /api/v1/services?fieldSelector=metadata.name=web&limit=500"]);
  });

  it("403 on the EndpointSlices: names verb, resource and namespace", async () => {
    const s = await fake({ denials: [{ verb: "list", resource: "endpointslices", namespace: "default" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: not allowed to list endpointslices.discovery.k8s.io in namespace "default" (403 Forbidden): RBAC must grant verb "list" on "endpointslices.discovery.k8s.io" in namespace "default"\n');
  });

  it("403 on the kube-proxy ConfigMap is fine (noted)", async () => {
    const s = await fake({ denials: [{ verb: "get", resource: "configmaps", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("warning: the kube-system/kube-proxy ConfigMap is not readable (403 Forbidden): proxy mode from the nodes only\n");
  });

  it("500 from the API server", async () => {
    const s = await fake({ faults: [{ path: /\/services\/web$/, status: 500, message: "etcdserver: request timed out" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: the API server failed to get services "web" in namespace "default" (500 InternalError): etcdserver: request timed out; try again\n');
  });

  it("--request-timeout: a server that does not answer", async () => {
    const s = await fake({ faults: [{ path: /endpointslices$/, delayMs: 3000 }] });
    const t = Date.now();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "--request-timeout", "300ms"]);
    expect(Date.now() - t).toBeLessThan(2500);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: the API server ${s.url} did not answer within 300ms (GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices); raise --request-timeout or check the cluster\n`);
  });

  it("--node that does not exist", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: node "nope" not found\n');
  });

  it.each([
    { flag: ["--timeout", "soon"], want: 'error: --timeout "soon": want a duration such as 30s, 1m30s or 500ms\n(run with --help for usage)\n' },
    { flag: ["--parallel", "0"], want: 'error: --parallel "0": want a whole number from 1 to 256\n(run with --help for usage)\n' },
  ])("bad flag value $flag is a usage error", async ({ flag, want }) => {
    const r = await run(["svc/web", "--kubeconfig", "/nonexistent", ...flag]);
    expect(r).toEqual({ code: 2, stdout: "", stderr: want });
  });
});

describe("node collection failures that need no exec: each node says why, no pod is left", () => {
  const noProxy = { kubeProxyPods: false };
  it("RBAC denies exec: one precise message before anything is created", async () => {
    const s = await fake({ denials: [{ verb: "get", resource: "pods/exec", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: not allowed to exec into pods in namespace "kube-system": RBAC must grant verb "get" on "pods/exec" there (an exec over WebSocket is authorized as "get", and from Kubernetes v1.35 also as "create") to collect the nodes\' rules; or run with --no-exec to analyse from the API alone\n');
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
    // get/create pods/exec, create/watch/get/delete pods
    expect(s.requests.filter((x) => x.path.endsWith("selfsubjectaccessreviews")).length).toBe(6);
  });

  it("exec refused (403) in the kube-proxy pod, the access review unavailable: the authorizer's verb \"get\" is named, and no debug pod is made in the same namespace", async () => {
    const s = await fake({ denials: [{ verb: "get", resource: "pods/exec", namespace: "kube-system" }], faults: [{ path: /selfsubjectaccessreviews$/, status: 403 }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'not analysed: the kube-proxy pod kube-proxy-k8s-guide-worker cannot be used: not allowed to exec into pod "kube-proxy-k8s-guide-worker" in namespace "kube-system" (403 Forbidden): ' +
        'RBAC must grant verb "get" on "pods/exec" in namespace "kube-system" (an exec over WebSocket is an HTTP GET, authorized as "get" on pods/exec, and from Kubernetes v1.35 also as "create" ' +
        '(AuthorizePodWebsocketUpgradeCreatePermission)); or run with --no-exec to analyse from the API alone. No debug pod is created: it would be in the same namespace "kube-system", ' +
        "where exec is refused alike; pass --debug-namespace with a namespace where you may create pods and exec into them",
    );
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
    expect(s.requests.filter((x) => x.kind === "exec").length).toBe(1);
  });

  it("RBAC denies creating pods and there is no kube-proxy pod: the node reports what is missing", async () => {
    const s = await fake({ ...noProxy, denials: [{ verb: "create", resource: "pods", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('not analysed: cannot create a debug pod on node k8s-guide-worker (the kube-proxy pod cannot be used: no running kube-proxy pod on the node in namespace kube-system): RBAC must grant verb "create" on "pods" in namespace "kube-system"');
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
  });

  it("RBAC denies watching pods and there is no kube-proxy pod: nothing is created, the node names the watch", async () => {
    const s = await fake({ ...noProxy, denials: [{ verb: "watch", resource: "pods", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('not analysed: cannot create a debug pod on node k8s-guide-worker (the kube-proxy pod cannot be used: no running kube-proxy pod on the node in namespace kube-system): RBAC must grant verb "watch" on "pods" in namespace "kube-system"');
    expect(s.requests.filter((x) => x.method !== "GET" && !x.path.endsWith("selfsubjectaccessreviews"))).toEqual([]);
  });

  it("--via kube-proxy and no kube-proxy pod: the node says why and what lets a debug pod collect; only exec is reviewed, nothing is created", async () => {
    const s = await fake({ ...noProxy });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--via", "kube-proxy"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("not analysed: the kube-proxy pod cannot collect node k8s-guide-worker (no running kube-proxy pod on the node in namespace kube-system), and --via kube-proxy creates no debug pod: run with --via auto to let one collect");
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
    // exec (get and create on pods/exec) is all such a run needs: creating and deleting pods is not asked about
    expect(s.requests.filter((x) => x.path.endsWith("selfsubjectaccessreviews")).length).toBe(2);
  });

  it("--via kube-proxy --dry-run: no manifest, nothing created, even where RBAC denies creating pods", async () => {
    const s = await fake({ denials: [{ verb: "create", resource: "pods", namespace: "kube-system" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--via", "kube-proxy", "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("dry run: nothing is created; with --via kube-proxy kubectl-netpath only execs into each node's kube-proxy pod in kube-system and creates no pod\n");
    expect(s.requests.filter((x) => x.method !== "GET")).toEqual([]);
  });

  it("an admission webhook refuses the debug pod (403, not RBAC): its message is quoted as kubectl does, no RBAC claim", async () => {
    const denial = 'admission webhook "validation.gatekeeper.sh" denied the request: [psp-privileged] Privileged container is not allowed: debug';
    const s = await fake({ ...noProxy, faults: [{ method: "POST", path: /\/namespaces\/kube-system\/pods$/, status: 403, message: denial }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: node k8s-guide-worker: could not create pods in namespace "kube-system": Error from server (Forbidden): ${denial}; the debug pod needs hostNetwork and NET_ADMIN/NET_RAW`);
    expect(r.stdout + r.stderr).not.toMatch(/RBAC/);
  });

  it("--debug-namespace that does not exist (404 namespaces \"NS\" not found on the create): the namespace is named, not the pod", async () => {
    const s = await fake({ ...noProxy, faults: [{ method: "POST", path: /\/namespaces\/netpath-debug\/pods$/, status: 404, message: 'namespaces "netpath-debug" not found' }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--debug-namespace", "netpath-debug"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: node k8s-guide-worker: namespace "netpath-debug" does not exist: Error from server (NotFound): namespaces "netpath-debug" not found; pass --debug-namespace with an existing namespace (or create it: kubectl create namespace netpath-debug);');
    expect(r.stdout + r.stderr).not.toContain("pods not found");
  });

  it("Pod Security Admission rejects the debug pod", async () => {
    const s = await fake({ ...noProxy, namespaces: { "kube-system": { "pod-security.kubernetes.io/enforce": "baseline" } } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: node k8s-guide-worker: Pod Security Admission of namespace "kube-system" (level "baseline:latest") rejected the debug pod: host namespaces (hostNetwork=true), non-default capabilities (container "collector" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add). The debug pod needs hostNetwork and NET_ADMIN/NET_RAW: label the namespace pod-security.kubernetes.io/enforce=privileged (kubectl label ns kube-system pod-security.kubernetes.io/enforce=privileged --overwrite), or pass --debug-namespace with a namespace that allows it, or run with --no-exec to analyse from the API alone;');
  });

  it("the image cannot be pulled: says so and deletes the pod", async () => {
    const s = await fake({ ...noProxy, pods: { badImages: [DEFAULT_IMAGE] } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`not analysed: debug pod kube-system/kubectl-netpath-k8s-guide-worker-[a-z0-9]{5} on node k8s-guide-worker: the image "${IMG}" cannot be pulled \\(ErrImagePull: failed to pull and unpack image "docker.io/${IMG}:latest": failed to resolve reference: not found\\); pass --image with an image the node can pull`));
    expect(s.requests.filter((x) => x.method === "DELETE").length).toBe(1);
  });

  it("the pod does not start within --timeout: says what it was waiting for, and deletes it", async () => {
    const s = await fake({ ...noProxy, pods: { startDelayMs: 10_000 } });
    const t = Date.now();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker", "--timeout", "1s"]);
    expect(Date.now() - t).toBeLessThan(4000);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`not analysed: debug pod kube-system/kubectl-netpath-k8s-guide-worker-[a-z0-9]{5} on node k8s-guide-worker was not Running within 1s \\(last state: pulling the image / creating the container\\); the node may be slow to pull ${IMG}: raise --timeout, or pass --image with an image already on the node`));
    const created = s.requests.find((x) => x.method === "POST" && x.path.endsWith("/pods"))!;
    expect(s.requests.some((x) => x.method === "DELETE" && x.at >= created.at)).toBe(true);
  });

  it("a 500 after the pod was created: the pod the client never saw is still deleted", async () => {
    const s = await fake({ ...noProxy, faults: [{ method: "POST", path: /\/namespaces\/kube-system\/pods$/, status: 500, afterCreate: true, message: "etcd leader changed" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("(500 InternalError): etcd leader changed; try again");
    expect(s.requests.filter((x) => x.method === "DELETE" && x.status === 200).length).toBe(1);
  });

  it("409 on create (a pod of that name exists): reported, and that pod is not ours to delete", async () => {
    const s = await fake({ ...noProxy, faults: [{ method: "POST", path: /\/namespaces\/kube-system\/pods$/, status: 409, message: 'pods "kubectl-netpath-k8s-guide-worker-zzzzz" already exists' }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/not analysed: conflict on pods in namespace "kube-system" \(409 AlreadyExists\): pods "kubectl-netpath-k8s-guide-worker-zzzzz" already exists/);
    expect(s.requests.filter((x) => x.method === "DELETE")).toEqual([]);
  });

  it("pods in kube-system cannot be listed: the kube-proxy pod is unknown, a debug pod is used", async () => {
    const s = await fake({ denials: [{ verb: "list", resource: "pods", namespace: "kube-system" }], pods: { badImages: [DEFAULT_IMAGE] } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker"]);
    expect(r.code).toBe(1);
    expect(s.requests.filter((x) => x.method === "POST" && x.path.endsWith("/pods")).length).toBe(1);
    expect(r.stdout).toContain(`the image "${DEFAULT_IMAGE}" cannot be pulled`);
  });

  it("a NotReady node is not touched, and said why", async () => {
    const nodes: Node[] = web.objects.nodes.map((n) => n.metadata.name === "k8s-guide-worker2" ? { ...n, status: { ...n.status, conditions: [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." }] } } : n);
    const s = await fake({ objects: { ...web.objects, nodes } });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--node", "k8s-guide-worker2"]);
    expect(r.code).toBe(1);
    // retrying that node does not help while it is NotReady: wait for it, or fix its kubelet
    expect(r.stderr).toContain("error: node k8s-guide-worker2: node k8s-guide-worker2 is NotReady (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.): its kubelet cannot run an exec or a debug pod, and its rules may be stale; check it with kubectl describe node k8s-guide-worker2; wait until the node is Ready (or fix its kubelet), then run again\n");
    expect(s.requests.filter((x) => x.kind === "exec" || x.method === "POST" && x.path.endsWith("/pods"))).toEqual([]);
  });
});

describe("why-pending, live", () => {
  const zones = readBundle("examples/azure-zones");
  it("pod/busybox --why-pending: the live report equals the offline one on the example bundle; reads are bounded", async () => {
    const s = await fake({ objects: zones.objects });
    const live = await run(["pod/busybox", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig]);
    const offline = await run(["pod/busybox", "-n", "default", "--why-pending", "--from", "examples/azure-zones"]);
    expect(live.code).toBe(0);
    expect(live.stdout).toBe(offline.stdout);
    expect(s.requests.map(line)).toEqual([
      "GET /api/v1/namespaces/default/pods/busybox",
      // busybox is not scheduled: the non-terminal pods of the cluster, once, for NodeResourcesFit, NodePorts,
      // PodTopologySpread and InterPodAffinity (issue 16)
      "GET /api/v1/pods?fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=500",
      "GET /api/v1/namespaces/default/persistentvolumeclaims/md",
      "GET /api/v1/persistentvolumes?limit=500",
      "GET /apis/storage.k8s.io/v1/storageclasses?limit=500",
      "GET /api/v1/nodes?limit=500",
      // it mounts a claim: the CSI attach limits for NodeVolumeLimits (issue 16)
      "GET /apis/storage.k8s.io/v1/csinodes?limit=500",
      "GET /api/v1/namespaces/default/events?fieldSelector=involvedObject.kind=Pod,involvedObject.name=busybox&limit=500",
      "GET /api/v1/namespaces/default/events?fieldSelector=involvedObject.kind=PersistentVolumeClaim,involvedObject.name=md&limit=500",
    ]);
  });

  it("RBAC forbids list nodes: the answer says which verb and resource is missing and what it can say without it", async () => {
    const s = await fake({ objects: zones.objects, denials: [{ verb: "list", resource: "nodes" }] });
    const r = await run(["pod/busybox", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: list nodes is forbidden (403): RBAC must allow "list nodes"; answered without it');
    const report = JSON.parse(r.stdout);
    expect(report.nodesListed).toBe(false);
    expect(JSON.stringify(report.findings)).toContain('needs \\"list nodes\\" (verb list, resource nodes, cluster scope)');
  });

  it("RBAC forbids get nodes: the warning says the endpoints' nodes could not be read, not that the Service has no endpoint", async () => {
    const s = await fake({ denials: [{ verb: "get", resource: "nodes" }] });
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/the nodes of Service default\/web's endpoints \([^)]+\) could not be read \(see above\), so no node was chosen: pass --node NAME/);
    expect(r.stderr).not.toContain("has no endpoint on any node");
  });

  it("pvc that does not exist", async () => {
    const s = await fake({ objects: zones.objects });
    const r = await run(["pvc/nope", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: 'error: persistentvolumeclaim "nope" not found in namespace "default"\n' });
  });
});

describe("the test bed's PKI without openssl (node:crypto certificates)", () => {
  it("serves TLS and verifies client certificates", async () => {
    const s = await fake({ pki: "node:crypto" });
    expect(s.pki.via).toBe("node:crypto");
    const a = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    const b = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfigCert, "--no-exec"]);
    expect(a.code).toBe(0);
    expect(b).toEqual(a);
    expect(s.requests.map((x) => x.user)).toContain("cert-user");
  });
});

describe("--dry-run, capture, cleanup", () => {
  it("--dry-run prints the debug pods and creates nothing", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run"]);
    const docs = r.stdout.split("---\n").slice(0, 2);
    expect(docs[0]).toContain("kind: Pod\n");
    expect(docs[0]).toContain("nodeName: k8s-guide-worker\n");
    expect(docs[1]).toContain("nodeName: k8s-guide-worker2\n");
    expect(r.stdout).toContain("activeDeadlineSeconds: 120\n");
    expect(r.stderr).toContain("dry run: nothing is created");
    expect(s.requests.filter((x) => x.method !== "GET")).toEqual([]);
  });

  it("--dry-run --no-exec prints no debug pod (none would be created) and says so", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--no-exec"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("dry run: nothing is created; with --no-exec kubectl-netpath reads the API alone and creates no pod\n");
    expect(s.requests.filter((x) => x.method !== "GET")).toEqual([]);
  });

  it("--dry-run -o mermaid: a usage error (a dry run prints manifests, not a picture), not YAML in silence", async () => {
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", "/nonexistent", "--dry-run", "-o", "mermaid"]);
    expect(r).toEqual({ code: 2, stdout: "", stderr: "error: --dry-run prints the debug pods a live run would create, as YAML or JSON (-o yaml, -o json); -o mermaid draws a traced path, which a dry run does not trace: leave out one of them\n(run with --help for usage)\n" });
  });

  it("capture -n with a name that cannot be a namespace: a usage error before any request, as the main command", async () => {
    const s = await fake();
    const r = await run(["capture", "svc/web", "-n", "Bad_NS", "--kubeconfig", s.kubeconfig, "-o", join(s.dir, "b.json")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: -n "Bad_NS" is not a valid namespace name (lower-case letters, digits and \'-\', at most 63)\n(run with --help for usage)\n');
    expect(s.requests).toEqual([]);
  });

  it("capture -o json|yaml|…: a format word is refused (it would be a file of that name holding JSON), before any request", async () => {
    const s = await fake();
    const dir = mkdtempSync(join(tmpdir(), "netpath-capture-o-"));
    const inDir = async (argv: string[]) => {
      const io = captureIo();
      io.cwd = dir;
      return { code: await runLiveCli(argv, io), stdout: io.out.join(""), stderr: io.err.join("") };
    };
    for (const word of ["json", "yaml", "yml", "text", "wide", "name", "mermaid", "dot"]) {
      for (const argv of [["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", word], ["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, `--output=${word}`, "--dry-run"]]) {
        const r = await inDir(argv);
        const file = word === "yaml" || word === "yml" ? "web.bundle.yaml" : "web.bundle.json";
        expect(r, argv.join(" ")).toEqual({
          code: 2,
          stdout: "",
          stderr: `error: capture -o takes the bundle file to write, not a format: -o ${word} would write JSON to a file named "${word}" in the current directory; give a file name, e.g. -o ${file} (its extension sets the format: .json, or .yaml/.yml), or -o - for JSON on stdout\n(run with --help for usage)\n`,
        });
      }
    }
    expect(s.requests).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    // a path is taken as given, even one named like a format
    const given = await inDir(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", "./yaml"]);
    expect([given.code, given.stderr.split("\n")[0]]).toEqual([0, expect.stringMatching(/^wrote \.\/yaml: 1 Service/)]);
    expect(readdirSync(dir)).toEqual(["yaml"]);
  });

  it("--via debug-pod --dry-run prints the debug pod of every node; an unknown --via is a usage error", async () => {
    const s = await fake();
    const r = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--via", "debug-pod"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("dry run: nothing is created; for each node kubectl-netpath would create this debug pod in kube-system:\n");
    expect(r.stdout.split("---\n").map((d) => /nodeName: (\S+)/.exec(d)?.[1])).toEqual(["k8s-guide-worker", "k8s-guide-worker2"]);
    // -o json: what kubectl --dry-run -o json prints for several objects, a v1 List (stdout stays parseable)
    const json = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--dry-run", "--via", "debug-pod", "-o", "json"]);
    const list = JSON.parse(json.stdout) as { kind: string; items: { spec: { nodeName: string } }[] };
    expect([list.kind, list.items.map((p) => p.spec.nodeName)]).toEqual(["List", ["k8s-guide-worker", "k8s-guide-worker2"]]);
    const bad = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--via", "ssh"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: option '--via <where>' argument 'ssh' is invalid. Allowed choices are auto, kube-proxy, debug-pod.");
    expect(s.requests.filter((x) => x.method !== "GET")).toEqual([]);
  });

  it("capture --no-exec writes the bundle; --from it gives the live report; no secret leaks", async () => {
    const s = await fake();
    const out = join(s.dir, "web.bundle.json");
    const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
    expect(c.code).toBe(0);
    expect(c.stderr).toBe(`wrote ${out}: 1 Service, 1 EndpointSlice, 2 Pods, 2 Nodes, 1 ConfigMap; node state: none\nanalyse it with: kubectl netpath svc/web -n default --from ${out}\n`);
    const text = readFileSync(out, "utf8");
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("must not be captured");
    const b = decodeBundle(text, out);
    expect(b.capture.context).toBe("fake");
    expect(b.capture.command).toBe("kubectl netpath svc/web -n default --no-exec");
    const live = await run(["svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec"]);
    const offline = await run(["svc/web", "-n", "default", "--from", out]);
    expect(offline.stdout).toBe(live.stdout);
  });

  it("capture -o FILE.yaml writes YAML; capture without -o is a usage error", async () => {
    const s = await fake();
    const out = join(s.dir, "web.bundle.yaml");
    expect((await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out])).code).toBe(0);
    expect(readFileSync(out, "utf8")).toMatch(/^format: kubectl-netpath\/bundle\n/);
    const bad = await run(["capture", "svc/web"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: required option '-o, --output <file>' not specified");
  });

  it("cleanup deletes leftover debug pods (and only those); --dry-run lists them", async () => {
    // issue 13 defect 3: a leftover is a pod with the label AND the run annotations whose run is over (here: Failed)
    const runAnn = { "kubectl-netpath/run-id": "r0", "kubectl-netpath/created-by": "kubectl-netpath test", "kubectl-netpath/created-at": "2026-01-01T00:00:00Z", "kubectl-netpath/expires-at": "2026-01-01T00:02:00Z" };
    const leftover = (name: string, ns: string): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: ns, labels: { "app.kubernetes.io/managed-by": "kubectl-netpath" }, annotations: { "kubectl-netpath/node": "k8s1", ...runAnn } }, spec: { nodeName: "k8s1" }, status: { phase: "Failed" } });
    const s = await fake({ objects: { ...lab.objects, pods: [...lab.objects.pods, leftover("kubectl-netpath-k8s1-aaaaa", "kube-system"), leftover("kubectl-netpath-k8s1-bbbbb", "other")] } });
    const dry = await run(["cleanup", "--kubeconfig", s.kubeconfig, "-A", "--dry-run"]);
    expect(dry).toEqual({ code: 0, stdout: "would delete pod kube-system/kubectl-netpath-k8s1-aaaaa (node k8s1, Failed): ended (Failed)\nwould delete pod other/kubectl-netpath-k8s1-bbbbb (node k8s1, Failed): ended (Failed)\n", stderr: "" });
    const one = await run(["cleanup", "--kubeconfig", s.kubeconfig]);
    expect(one).toEqual({ code: 0, stdout: "deleted pod kube-system/kubectl-netpath-k8s1-aaaaa (node k8s1, Failed): ended (Failed)\n", stderr: "" });
    expect(s.requests.filter((x) => x.method === "GET" && x.path.endsWith("/pods")).at(-1)!.query.labelSelector).toEqual(["app.kubernetes.io/managed-by=kubectl-netpath"]);
    const all = await run(["cleanup", "--kubeconfig", s.kubeconfig, "-A"]);
    expect(all.stdout).toBe("deleted pod other/kubectl-netpath-k8s1-bbbbb (node k8s1, Failed): ended (Failed)\n");
    expect(await run(["cleanup", "--kubeconfig", s.kubeconfig, "-A"])).toEqual({ code: 0, stdout: "", stderr: "no kubectl-netpath debug pods in any namespace\n" });
    expect(s.get("pods", "kube-system", "coredns-78fcd69978-cvpx2")).toBeDefined();
  });
});

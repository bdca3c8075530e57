// Pure pieces of the live path: flag values, kubeconfig merging, the debug pod, pod/node state, error messages,
// sanitizing, bounded concurrency, and the kube-proxy chain-name hash of the test bed's rule generator.
import { describe, expect, it } from "vitest";
import { buildDebugPod, debugPodName, MANAGED_BY_LABEL, nftListingMemoryMiB } from "../src/kube/debug_pod.ts";
import { FlagValueError, formatMs, parseCount, parseDurationMs } from "../src/kube/duration.ts";
import { apiError, networkError } from "../src/kube/errors.ts";
import { KubeconfigShapeError, mergeKubeconfigs } from "../src/kube/kubeconfig_merge.ts";
import { mapLimit } from "../src/kube/pool.ts";
import { nodeNotReady, podState } from "../src/kube/pod_state.ts";
import { retryAfterMs } from "../src/kube/rest.ts";
import { REDACTED, sanitizeObject } from "../src/kube/sanitize.ts";
import { UsageError } from "../src/cli/target.ts";
import type { Node, Pod } from "../src/model/k8s.ts";
import { base32, sepChain, svcChain } from "./helpers/fake_node_rules.ts";

describe("durations and counts (kubectl's flag syntax)", () => {
  it.each([
    { name: "seconds", input: "30s", want: 30_000 },
    { name: "bare integer is seconds", input: "5", want: 5_000 },
    { name: "combined", input: "1m30s", want: 90_000 },
    { name: "milliseconds", input: "500ms", want: 500 },
    { name: "fraction", input: "1.5s", want: 1_500 },
    { name: "hours", input: "1h", want: 3_600_000 },
    { name: "zero = no limit", input: "0", want: 0 },
  ])("$name: $input", ({ input, want }) => expect(parseDurationMs("--timeout", input)).toBe(want));

  it.each(["soon", "", "10 s", "-5s", "1d"])("rejects %j with the flag name and an example", (input) => {
    expect(() => parseDurationMs("--timeout", input)).toThrow(new FlagValueError(`--timeout "${input}": want a duration such as 30s, 1m30s or 500ms`));
  });

  it("a bad flag value is a usage error (exit 2)", () => {
    expect(() => parseCount("--parallel", "0")).toThrow(UsageError);
  });

  it.each([
    { input: "8", want: 8 },
    { input: "1", want: 1 },
    { input: "256", want: 256 },
  ])("counts: $input", ({ input, want }) => expect(parseCount("--parallel", input)).toBe(want));

  it.each(["0", "257", "x", "2.5"])("rejects count %j", (input) => {
    expect(() => parseCount("--parallel", input)).toThrow(`--parallel "${input}": want a whole number from 1 to 256`);
  });

  it("formats", () => {
    expect([formatMs(250), formatMs(60_000), formatMs(1_500)]).toEqual(["250ms", "60s", "1.5s"]);
  });
});

describe("kubeconfig merging follows kubectl (first definition wins)", () => {
  const a = {
    "current-context": "a",
    clusters: [{ name: "c1", cluster: { server: "https://one", "certificate-authority": "ca.crt" } }],
    users: [{ name: "u1", user: { "client-certificate": "u1.crt", "client-key": "/abs/u1.key", tokenFile: "tok" } }],
    contexts: [{ name: "a", context: { cluster: "c1", user: "u1" } }],
  };
  const b = {
    "current-context": "b",
    clusters: [{ name: "c1", cluster: { server: "https://SHADOWED" } }, { name: "c2", cluster: { server: "https://two" } }],
    users: [],
    contexts: [{ name: "b", context: { cluster: "c2", namespace: "shop" } }],
  };
  it("keeps the first cluster of a name, the first current-context, and resolves paths per file", () => {
    const m = mergeKubeconfigs([{ path: "/home/me/.kube/a.yaml", doc: a }, { path: "/etc/k/b.yaml", doc: b }]);
    expect(m["current-context"]).toBe("a");
    expect(m.clusters.map((c) => [c.name, (c.cluster as { server: string }).server])).toEqual([["c1", "https://one"], ["c2", "https://two"]]);
    expect((m.clusters[0]!.cluster as Record<string, string>)["certificate-authority"]).toBe("/home/me/.kube/ca.crt");
    expect(m.users[0]!.user).toEqual({ "client-certificate": "/home/me/.kube/u1.crt", "client-key": "/abs/u1.key", tokenFile: "/home/me/.kube/tok" });
    expect(m.contexts.map((c) => c.name)).toEqual(["a", "b"]);
  });
  it("a later file sets current-context when earlier ones do not", () => {
    const m = mergeKubeconfigs([{ path: "/x/a", doc: { ...a, "current-context": "" } }, { path: "/x/b", doc: b }]);
    expect(m["current-context"]).toBe("b");
  });
  it.each([
    { name: "not a mapping", doc: ["x"], want: "/k/c: not a kubeconfig (want a YAML mapping with clusters, users, contexts)" },
    { name: "list is not a list", doc: { contexts: { a: 1 } }, want: '/k/c: "contexts" must be a list' },
    { name: "entry without name", doc: { users: [{ user: {} }] }, want: "/k/c: users[0] has no name" },
  ])("rejects $name", ({ doc, want }) => {
    expect(() => mergeKubeconfigs([{ path: "/k/c", doc }])).toThrow(new KubeconfigShapeError(want));
  });
  it("skips empty documents", () => {
    expect(mergeKubeconfigs([{ path: "/k/empty", doc: null }]).contexts).toEqual([]);
  });
});

describe("buildDebugPod (pure, as kubectl debug node builds its pod)", () => {
  const base = { name: "kubectl-netpath-k8s1-abcde", namespace: "kube-system", activeDeadlineSeconds: 120, runId: "r1", createdBy: "kubectl-netpath test", createdAtMs: Date.parse("2026-01-02T03:04:05.678Z") };
  it("netadmin: host network (no hostPID), all taints tolerated, never restarted, reaped by deadline, NET_ADMIN/NET_RAW only", () => {
    const p = buildDebugPod("k8s1", base);
    expect(p.metadata?.labels?.[MANAGED_BY_LABEL]).toBe("kubectl-netpath");
    expect(p.metadata?.labels?.["kubectl-netpath/run"]).toBe("r1");
    expect(p.metadata?.annotations?.["kubectl-netpath/node"]).toBe("k8s1");
    expect(p.spec).toMatchObject({
      nodeName: "k8s1",
      hostNetwork: true,
      restartPolicy: "Never",
      activeDeadlineSeconds: 120,
      tolerations: [{ operator: "Exists" }],
      automountServiceAccountToken: false,
    });
    expect(p.spec.hostPID).toBeUndefined();
    expect(p.metadata?.annotations).toMatchObject({
      "kubectl-netpath/run-id": "r1",
      "kubectl-netpath/created-by": "kubectl-netpath test",
      "kubectl-netpath/created-at": "2026-01-02T03:04:05Z",
      "kubectl-netpath/expires-at": "2026-01-02T03:06:05Z",
    });
    const c = p.spec.containers[0]!;
    expect(c.image).toBe("nicolaka/netshoot:v0.13@sha256:a20c2531bf35436ed3766cd6cfe89d352b050ccc4d7005ce6400adf97503da1b");
    expect(c.command).toEqual(["sh", "-c", "trap 'exit 0' TERM; sleep 120 & wait"]);
    expect(c.securityContext).toEqual({
      capabilities: { drop: ["ALL"], add: ["NET_ADMIN", "NET_RAW"] },
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.volumeMounts).toEqual([{ name: "run", mountPath: "/run" }]);
    expect(p.spec.volumes).toEqual([{ name: "run", emptyDir: { sizeLimit: "1Mi" } }]);
  });
  it("sysadmin: privileged, host root read-only at /host (for chroot /host iptables-legacy-save)", () => {
    const p = buildDebugPod("k8s1", { ...base, profile: "sysadmin", image: "registry.local/netshoot:v0.13" });
    const c = p.spec.containers[0]!;
    expect(c.image).toBe("registry.local/netshoot:v0.13");
    expect(c.securityContext).toEqual({ privileged: true });
    expect(c.volumeMounts).toEqual([{ name: "host-root", mountPath: "/host", readOnly: true }]);
    expect(p.spec.volumes).toEqual([{ name: "host-root", hostPath: { path: "/", type: "Directory" } }]);
  });
  it("memory: 512Mi by default; raised for nft's listing of a big kube-proxy table, never lowered", () => {
    expect(buildDebugPod("n", base).spec.containers[0]!.resources).toEqual({ requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "512Mi" } });
    // 406 MiB measured for 10,005 elements: the limit leaves a quarter to spare
    expect(nftListingMemoryMiB(10005)).toBe(573);
    expect(nftListingMemoryMiB(2700)).toBeLessThan(512);
    expect(nftListingMemoryMiB(20000)).toBe(1080);
    expect(buildDebugPod("n", { ...base, memoryLimitMiB: 1080 }).spec.containers[0]!.resources).toEqual({ requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "1080Mi" } });
    expect(buildDebugPod("n", { ...base, memoryLimitMiB: 200 }).spec.containers[0]!.resources!.limits!.memory).toBe("512Mi");
  });
  it.each([0, -1, 1.5])("rejects activeDeadlineSeconds %d", (d) => {
    expect(() => buildDebugPod("n", { ...base, activeDeadlineSeconds: d })).toThrow(`activeDeadlineSeconds must be a whole number >= 1 (got ${d})`);
  });
  it.each([
    { node: "k8s1", want: "kubectl-netpath-k8s1-abcde" },
    { node: "ip-10-0-1-23.eu-west-1.compute.internal", want: "kubectl-netpath-ip-10-0-1-23-eu-west-1-compute-internal-abcde" },
    { node: "ip-10-0-1-23.eu-west-1.compute.internal.example", want: "kubectl-netpath-ip-10-0-1-23-eu-west-1-compute-internal-e-abcde" },
    { node: "-Weird_Name-", want: "kubectl-netpath-weird-name-abcde" },
  ])("name for $node is a DNS label of at most 63 characters", ({ node, want }) => {
    const n = debugPodName(node, "abcde");
    expect(n).toBe(want);
    expect(n.length).toBeLessThanOrEqual(63);
    expect(n).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
});

describe("pod and node state", () => {
  const pod = (status: Pod["status"], extra: Partial<Pod["metadata"]> = {}): Pod => ({ metadata: { name: "p", ...extra }, status });
  it.each([
    { name: "running", input: pod({ phase: "Running", containerStatuses: [{ state: { running: {} } }] }), want: { kind: "running" } },
    { name: "just created", input: pod(undefined), want: { kind: "pending", detail: "accepted by the API server" } },
    { name: "creating", input: pod({ phase: "Pending", containerStatuses: [{ state: { waiting: { reason: "ContainerCreating" } } }] }), want: { kind: "pending", detail: "pulling the image / creating the container" } },
    {
      name: "image pull back-off",
      input: pod({ phase: "Pending", containerStatuses: [{ state: { waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "nicolaka/netshoot"' } } }] }),
      want: { kind: "failed", reason: "ImagePullBackOff", detail: 'the image "nicolaka/netshoot" cannot be pulled (ImagePullBackOff: Back-off pulling image "nicolaka/netshoot"); pass --image with an image the node can pull that has iptables, ipset, ipvsadm and nft (for example a copy of nicolaka/netshoot in your registry)' },
    },
    { name: "deadline exceeded", input: pod({ phase: "Failed", reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" }), want: { kind: "failed", reason: "DeadlineExceeded", detail: "the kubelet failed the pod (DeadlineExceeded: Pod was active on the node longer than the specified deadline)" } },
    { name: "kubelet admission", input: pod({ phase: "Failed", reason: "OutOfcpu" }), want: { kind: "failed", reason: "OutOfcpu", detail: "the kubelet failed the pod (OutOfcpu)" } },
    { name: "being deleted", input: pod({ phase: "Running" }, { deletionTimestamp: "2024-01-01T00:00:00Z" }), want: { kind: "failed", reason: "Deleted", detail: "the pod is being deleted" } },
  ])("$name", ({ input, want }) => expect(podState(input, "nicolaka/netshoot")).toEqual(want));

  it.each([
    { name: "ready", cond: [{ type: "Ready", status: "True" }], want: undefined },
    {
      name: "unknown",
      cond: [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." }],
      want: "node n1 is NotReady (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.): its kubelet cannot run an exec or a debug pod, and its rules may be stale; check it with kubectl describe node n1",
    },
    { name: "no condition", cond: [], want: "node n1 is NotReady (no Ready condition): its kubelet cannot run an exec or a debug pod, and its rules may be stale; check it with kubectl describe node n1" },
  ])("node $name", ({ cond, want }) => {
    const n: Node = { metadata: { name: "n1" }, status: { conditions: cond } };
    expect(nodeNotReady(n)).toBe(want);
  });
});

describe("which answers are retried after Retry-After (client-go rest/with_retry.go checkWait)", () => {
  it.each([
    { answer: { status: 429, retryAfter: "2" }, method: "POST", want: 2000 },
    { answer: { status: 429, retryAfter: "0" }, method: "GET", want: 0 },
    { answer: { status: 503, retryAfter: "1" }, method: "GET", want: 1000 },
    { answer: { status: 500, retryAfter: "1" }, method: "DELETE", want: 1000 },
    // a create that failed with 5xx may have created the pod: not sent again
    { answer: { status: 503, retryAfter: "1" }, method: "POST", want: undefined },
    { answer: { status: 429 }, method: "GET", want: undefined },
    // an HTTP date is not read (client-go's retryAfterSeconds is strconv.Atoi)
    { answer: { status: 429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" }, method: "GET", want: undefined },
    { answer: { status: 404, retryAfter: "1" }, method: "GET", want: undefined },
  ])("$answer.status Retry-After $answer.retryAfter to $method → $want", ({ answer, method, want }) => {
    expect(retryAfterMs(answer, method)).toBe(want);
  });
});

describe("API errors are rewritten for humans", () => {
  const server = { url: "https://10.0.0.1:6443", context: "prod", user: "jane" };
  const st = (code: number, reason: string, message: string) => JSON.stringify({ kind: "Status", status: "Failure", code, reason, message });
  it.each([
    {
      name: "401",
      input: [401, st(401, "Unauthorized", "Unauthorized"), { verb: "get", resource: "services", namespace: "shop", name: "web" }],
      want: 'the API server https://10.0.0.1:6443 rejected the credentials of context "prod" (user "jane") (401 Unauthorized): log in again or refresh the token, then check with `kubectl --context prod auth whoami`',
    },
    {
      // a WebSocket exec is a GET: the authorizer's refusal names "get"
      name: "403 on pods/exec names the authorizer's verb, how exec is authorized, and --no-exec",
      input: [403, st(403, "Forbidden", 'pods "kube-proxy-x" is forbidden: User "jane" cannot get resource "pods/exec" in API group "" in the namespace "kube-system"'), { verb: "get", resource: "pods/exec", namespace: "kube-system", name: "kube-proxy-x" }],
      want: 'not allowed to exec into pod "kube-proxy-x" in namespace "kube-system" (403 Forbidden): RBAC must grant verb "get" on "pods/exec" in namespace "kube-system" (an exec over WebSocket is an HTTP GET, authorized as "get" on pods/exec, and from Kubernetes v1.35 also as "create" (AuthorizePodWebsocketUpgradeCreatePermission)); or run with --no-exec to analyse from the API alone',
    },
    {
      // v1.35's second check (ExecREST.Connect → ensureAuthorizedForVerb "create"): the authorizer's bare reason
      name: "403 on pods/exec from the v1.35 create check",
      input: [403, st(403, "Forbidden", 'pods "kube-proxy-x" is forbidden: '), { verb: "get", resource: "pods/exec", namespace: "kube-system", name: "kube-proxy-x" }],
      want: 'not allowed to exec into pod "kube-proxy-x" in namespace "kube-system" (403 Forbidden): RBAC must grant verb "create" on "pods/exec" in namespace "kube-system" (an exec over WebSocket is an HTTP GET, authorized as "get" on pods/exec, and from Kubernetes v1.35 also as "create" (AuthorizePodWebsocketUpgradeCreatePermission)); or run with --no-exec to analyse from the API alone',
    },
    {
      name: "403 on a list",
      input: [403, st(403, "Forbidden", 'endpointslices.discovery.k8s.io is forbidden: User "jane" cannot list resource "endpointslices" in API group "discovery.k8s.io" in the namespace "shop"'), { verb: "list", resource: "endpointslices.discovery.k8s.io", namespace: "shop" }],
      want: 'not allowed to list endpointslices.discovery.k8s.io in namespace "shop" (403 Forbidden): RBAC must grant verb "list" on "endpointslices.discovery.k8s.io" in namespace "shop"',
    },
    {
      // not the authorizer: the webhook's words, as kubectl prints them; no RBAC claim
      name: "403 from an admission webhook on the debug pod's create",
      input: [403, st(403, "Forbidden", 'admission webhook "validation.gatekeeper.sh" denied the request: [psp-privileged] Privileged container is not allowed: debug'), { verb: "create", resource: "pods", namespace: "kube-system" }],
      want: 'could not create pods in namespace "kube-system": Error from server (Forbidden): admission webhook "validation.gatekeeper.sh" denied the request: [psp-privileged] Privileged container is not allowed: debug; the debug pod needs hostNetwork and NET_ADMIN/NET_RAW (--profile sysadmin: privileged): have it allowed, or pass --debug-namespace with a namespace where it is; or run with --no-exec to analyse from the API alone',
    },
    {
      // kubectl proxy's filter answers a rejected path with plain text (k8s.io/kubectl/pkg/proxy FilterServer)
      name: "plain-text 403 on exec (kubectl proxy)",
      input: [403, "Forbidden\n", { verb: "get", resource: "pods/exec", namespace: "kube-system", name: "kube-proxy-x" }],
      want: 'could not exec into pod "kube-proxy-x" in namespace "kube-system": Error from server (Forbidden): Forbidden (a plain-text answer, not the API server\'s Status: a proxy between refused it; kubectl proxy refuses exec unless its --reject-paths allows it); or run with --no-exec to analyse from the API alone',
    },
    {
      name: "403 Pod Security",
      input: [403, st(403, "Forbidden", 'pods "d" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true)'), { verb: "create", resource: "pods", namespace: "kube-system" }],
      want: 'Pod Security Admission of namespace "kube-system" (level "baseline:latest") rejected the debug pod: host namespaces (hostNetwork=true, hostPID=true). The debug pod needs hostNetwork and NET_ADMIN/NET_RAW: label the namespace pod-security.kubernetes.io/enforce=privileged (kubectl label ns kube-system pod-security.kubernetes.io/enforce=privileged --overwrite), or pass --debug-namespace with a namespace that allows it, or run with --no-exec to analyse from the API alone',
    },
    {
      // NamespaceLifecycle admission: the debug namespace does not exist (not the pod)
      name: "404 on a create in a namespace that does not exist",
      input: [404, JSON.stringify({ kind: "Status", status: "Failure", code: 404, reason: "NotFound", message: 'namespaces "netpath-debug" not found', details: { name: "netpath-debug", kind: "namespaces" } }), { verb: "create", resource: "pods", namespace: "netpath-debug" }],
      want: 'namespace "netpath-debug" does not exist: Error from server (NotFound): namespaces "netpath-debug" not found; pass --debug-namespace with an existing namespace (or create it: kubectl create namespace netpath-debug)',
    },
    { name: "404", input: [404, st(404, "NotFound", 'nodes "x" not found'), { verb: "get", resource: "nodes", name: "x" }], want: 'nodes "x" not found (cluster-scoped)' },
    {
      name: "500",
      input: [500, st(500, "InternalError", "etcdserver: request timed out"), { verb: "get", resource: "services", namespace: "shop", name: "web" }],
      want: 'the API server failed to get services "web" in namespace "shop" (500 InternalError): etcdserver: request timed out; try again',
    },
    { name: "non-JSON body", input: [502, "<html>bad gateway</html>", { verb: "get", resource: "services", namespace: "a", name: "b" }], want: 'the API server failed to get services "b" in namespace "a" (502 HTTP502): <html>bad gateway</html>; try again' },
  ] as const)("$name", ({ input, want }) => {
    const e = apiError(input[0], input[1], { ...input[2] }, server);
    expect(e.message).toBe(want);
    expect(e.status).toBe(input[0]);
  });

  it.each([
    { code: "ECONNREFUSED", want: 'cannot reach the API server https://10.0.0.1:6443 (connection refused): is the cluster running and is context "prod" the right one? (kubectl --context prod cluster-info)' },
    { code: "SELF_SIGNED_CERT_IN_CHAIN", want: `TLS with the API server https://10.0.0.1:6443 failed: the server's certificate chain ends in a CA the kubeconfig does not trust (SELF_SIGNED_CERT_IN_CHAIN); check certificate-authority(-data) and the server address of the cluster of context "prod" in your kubeconfig` },
    { code: "ERR_TLS_CERT_ALTNAME_INVALID", want: `TLS with the API server https://10.0.0.1:6443 failed: the server's certificate does not name this address (ERR_TLS_CERT_ALTNAME_INVALID); check certificate-authority(-data) and the server address of the cluster of context "prod" in your kubeconfig` },
  ])("network error $code", ({ code, want }) => {
    const err = Object.assign(new Error("boom"), { code });
    expect(networkError(err, server).message).toBe(want);
  });
  it("with --kubeconfig FILE the kubectl command suggested repeats it (else kubectl reads KUBECONFIG or ~/.kube/config)", () => {
    const given = { ...server, kubeconfig: "/home/jane/kube/prod.yaml" };
    expect(networkError(Object.assign(new Error("boom"), { code: "ECONNREFUSED" }), given).message).toBe(
      'cannot reach the API server https://10.0.0.1:6443 (connection refused): is the cluster running and is context "prod" the right one? (kubectl --kubeconfig /home/jane/kube/prod.yaml --context prod cluster-info)',
    );
    expect(apiError(401, st(401, "Unauthorized", "Unauthorized"), { verb: "get", resource: "services", namespace: "shop", name: "web" }, given).message).toBe(
      'the API server https://10.0.0.1:6443 rejected the credentials of context "prod" (user "jane") (401 Unauthorized): log in again or refresh the token, then check with `kubectl --kubeconfig /home/jane/kube/prod.yaml --context prod auth whoami`',
    );
    expect(networkError(Object.assign(new Error("boom"), { code: "ECONNREFUSED" }), { ...server, kubeconfig: "kube config" }).message).toContain("(kubectl --kubeconfig 'kube config' --context prod cluster-info)");
  });
});

describe("sanitizeObject: nothing secret goes into a bundle", () => {
  it("drops managedFields and last-applied, redacts literal env values, keeps valueFrom and the rest", () => {
    const pod = {
      metadata: {
        name: "p",
        managedFields: [{ manager: "kubectl" }],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"env":"secret"}', keep: "me" },
      },
      spec: {
        containers: [{ name: "a", env: [{ name: "PASSWORD", value: "hunter2" }, { name: "FROM", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }],
        initContainers: [{ name: "i", env: [{ name: "T", value: "t0ken" }] }],
      },
    };
    const out = sanitizeObject(pod);
    expect(out).toEqual({
      metadata: { name: "p", annotations: { keep: "me" } },
      spec: {
        containers: [{ name: "a", env: [{ name: "PASSWORD", value: REDACTED }, { name: "FROM", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }],
        initContainers: [{ name: "i", env: [{ name: "T", value: REDACTED }] }],
      },
    });
    expect(pod.spec.containers[0]!.env[0]!.value).toBe("hunter2"); // input untouched
  });
});

describe("mapLimit", () => {
  it("never runs more than `limit` at once and keeps order", async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (x) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, x * 3));
      inFlight--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0, 60]);
    expect(peak).toBe(3);
  });
  it("rejects with the first failure", async () => {
    await expect(mapLimit([1, 2, 3], 2, (x) => (x === 2 ? Promise.reject(new Error("two")) : Promise.resolve(x)))).rejects.toThrow("two");
  });
});

describe("the test bed's rule generator names chains as kube-proxy does", () => {
  it("base32 is RFC 4648", () => {
    expect(base32(new TextEncoder().encode("foobar"))).toBe("MZXW6YTBOI");
  });
  it.each([
    // examples/iptables-lab (seed 001, a real v1.22 node)
    { spn: "kube-system/kube-dns:dns", proto: "udp", want: "KUBE-SVC-TCOU7JCQXEZGVUNU" },
    { spn: "kube-system/kube-dns:dns-tcp", proto: "tcp", want: "KUBE-SVC-ERIFXISQEP7F7OF4" },
    // tests/fixtures/kube-proxy/TestOverallIPTablesRulesWithMultipleServices.v1.27.iptables-save
    { spn: "ns1/svc1:p80", proto: "tcp", want: "KUBE-SVC-XPGD46QRK7WJZT7O" },
  ])("$spn/$proto → $want", ({ spn, proto, want }) => expect(svcChain(spn, proto)).toBe(want));
  it("endpoint chains too", () => {
    expect(sepChain("ns1/svc1:p80", "tcp", "10.180.0.1:80")).toBe("KUBE-SEP-SXIVWICOYRO3J4NJ");
    expect(sepChain("kube-system/kube-dns:dns", "udp", "10.244.0.5:53")).toBe("KUBE-SEP-LPGSDLJ3FDW46N4W");
  });
});

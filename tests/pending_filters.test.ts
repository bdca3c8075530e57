// Issue 16: a pod Pending for a reason beyond volumes, taints and affinity gets that reason in the first line, in the
// scheduler's words, and the reconciliation with the scheduler's message agrees: NodeResourcesFit (requests incl.
// sidecar init containers and overhead, against allocatable minus the requests of the pods bound to the node, terminal
// pods excluded; "Too many pods"), NodePorts (hostPort conflicts), schedulingGates, a schedulerName nobody serves, and
// the PodScheduled condition when the Events are gone. Messages as kube-scheduler writes them (noderesources/fit.go,
// nodeports/node_ports.go, volumerestrictions, dynamicresources, framework's "didn't satisfy plugin(s)").
import { describe, expect, it } from "vitest";
import { emptyBundle } from "../src/bundle/bundle.ts";
import type { KubeEvent, Node, Pod } from "../src/model/k8s.ts";
import { explainPending } from "../src/pending/explain.ts";
import { fitsResources, podRequests, requestMilli } from "../src/pending/filters/resources.ts";
import { BundleError } from "../src/bundle/decode.ts";
import { classifyReason } from "../src/pending/scheduler_message.ts";
import { allowListObjects } from "../src/bundle/allow_list.ts";

const node = (name: string, alloc: Record<string, string>): Node => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/hostname": name } },
  // pods: 110 unless given (the kubelet always sets it; a node without it allows none)
  status: { addresses: [{ type: "InternalIP", address: "10.0.0.1" }], conditions: [{ type: "Ready", status: "True" }], allocatable: { pods: "110", ...alloc } } as Node["status"],
});
const pod = (name: string, spec: Record<string, unknown>, status: Record<string, unknown> = { phase: "Pending" }): Pod =>
  ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" }, spec: { containers: [], ...spec }, status } as unknown as Pod);
const req = (r: Record<string, string>) => ({ name: "c", resources: { requests: r } });
const event = (podName: string, message: string): KubeEvent =>
  ({ apiVersion: "v1", kind: "Event", metadata: { name: `${podName}.1`, namespace: "default" }, involvedObject: { kind: "Pod", name: podName, namespace: "default" }, reason: "FailedScheduling", type: "Warning", message, count: 1, source: { component: "default-scheduler" } } as unknown as KubeEvent);

function cluster(pods: Pod[], events: KubeEvent[] = [], nodes = [node("n1", { cpu: "4", memory: "8Gi", pods: "110" }), node("n2", { cpu: "4", memory: "8Gi", pods: "110" }), node("n3", { cpu: "2", memory: "4Gi", pods: "2" })]) {
  const b = emptyBundle({});
  b.objects.nodes.push(...nodes);
  b.objects.pods.push(...pods);
  b.objects.events.push(...events);
  return b;
}

describe("NodeResourcesFit arithmetic", () => {
  // cpu by MilliValue(), the others by Value() × 1000 (framework/types.go Resource.Add), both rounded up
  it.each([
    ["cpu", "100m", 100],
    ["cpu", "1", 1000],
    ["cpu", "1.5", 1500],
    ["cpu", "0.1", 100],
    ["cpu", "1.1", 1100],
    ["cpu", "0.0001", 1],
    ["cpu", 2, 2000],
    ["memory", "64Mi", 64 * 2 ** 20 * 1000],
    ["memory", "1e3", 1e6],
    ["memory", "129M", 129e9],
    ["memory", "100m", 1000],
    ["memory", "1.5", 2000],
    ["pods", "110", 110_000],
    ["example.com/gpu", "2", 2000],
  ])("%s quantity %s", (resource, q, milli) => {
    expect(requestMilli(resource as string, q as string | number)).toBe(milli);
  });
  it("rejects junk", () => expect(() => requestMilli("cpu", "12 apples")).toThrow(RangeError));
  it("a request or an allocatable that is not a quantity: one error naming the object, the field and what to do", () => {
    const fix = "; fix that object in the bundle, or export it again (kubectl get -o yaml)";
    expect(() => fitsResources(pod("p", { containers: [req({ cpu: "2" })] }), node("n1", { cpu: "banana" }), []))
      .toThrow(new BundleError(`node n1: status.allocatable cpu: "banana" is not a Kubernetes quantity${fix}`));
    expect(() => podRequests(pod("p", { containers: [req({ memory: "15Gix" })] })))
      .toThrow(new BundleError(`pod default/p: container c requests memory: "15Gix" is not a Kubernetes quantity${fix}`));
    expect(() => podRequests(pod("p", { containers: [req({ cpu: Infinity as unknown as string })] })))
      .toThrow(new BundleError(`pod default/p: container c requests cpu: Infinity is not a Kubernetes quantity${fix}`));
  });
  it("sidecar init containers add to the app containers; a plain init container needs its own plus the sidecars started before it (PodRequests)", () => {
    const p = pod("p", {
      containers: [req({ cpu: "1" })],
      initContainers: [{ ...req({ cpu: "500m" }), name: "side", restartPolicy: "Always" }, { ...req({ cpu: "2" }), name: "init" }],
      overhead: { cpu: "100m" },
    });
    // app 1 + sidecar 0.5 = 1.5; init: 2 + 0.5 = 2.5; max 2.5; + overhead 0.1
    expect(podRequests(p).get("cpu")).toBe(2600);
  });
  it("in-place resize: a bound pod counts the max of spec, status requests and allocated resources; the status only while the resize is infeasible", () => {
    const resized = (cond?: string) =>
      pod("r", { nodeName: "n1", containers: [req({ cpu: "3" })] }, {
        phase: "Running",
        containerStatuses: [{ name: "c", resources: { requests: { cpu: "1" } }, allocatedResources: { cpu: "1500m" } }],
        ...(cond ? { conditions: [{ type: "PodResizePending", status: "True", reason: cond }] } : {}),
      });
    expect(podRequests(resized()).get("cpu")).toBe(3000);
    expect(podRequests(resized("Infeasible")).get("cpu")).toBe(1500);
    expect(podRequests(resized("Deferred")).get("cpu")).toBe(3000);
    // a node of 4 CPUs with that pod: 1 CPU left while the 3-CPU resize is pending, 2.5 once it is infeasible
    expect(fitsResources(pod("p", { containers: [req({ cpu: "2" })] }), node("n1", { cpu: "4" }), [resized()]).reasons).toEqual(["Insufficient cpu"]);
    expect(fitsResources(pod("p", { containers: [req({ cpu: "2" })] }), node("n1", { cpu: "4" }), [resized("Infeasible")]).reasons).toEqual([]);
  });

  it("terminal pods free their requests; the rest count", () => {
    const bound = [pod("a", { nodeName: "n1", containers: [req({ cpu: "3" })] }, { phase: "Running" })];
    expect(fitsResources(pod("p", { containers: [req({ cpu: "2" })] }), node("n1", { cpu: "4" }), bound).reasons).toEqual(["Insufficient cpu"]);
    expect(fitsResources(pod("p", { containers: [req({ cpu: "1" })] }), node("n1", { cpu: "4" }), bound).reasons).toEqual([]);
  });
});

describe("the reason in the first line, in the scheduler's words", () => {
  it("cpu: 64 on 3 nodes: not '3/3 nodes fit'", () => {
    const p = pod("big", { containers: [req({ cpu: "64" })] });
    const r = explainPending(cluster([p], [event("big", "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..")]), { kind: "pod", namespace: "default", name: "big" });
    expect(r.answer.split("\n")[0]).toContain("0/3 nodes are available: 3 Insufficient cpu.");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
    expect(r.pods[0]!.nodes.every((n) => n.rejectedBy?.plugin === "NodeResourcesFit")).toBe(true);
  });

  it("memory on two nodes, 'Too many pods' on the third (allocatable pods 2, two bound)", () => {
    const bound = [pod("x1", { nodeName: "n3", containers: [req({ cpu: "100m" })] }, { phase: "Running" }), pod("x2", { nodeName: "n3", containers: [] }, { phase: "Running" }), pod("done", { nodeName: "n1", containers: [req({ memory: "8Gi" })] }, { phase: "Succeeded" })];
    const p = pod("mem", { containers: [req({ memory: "16Gi" })] });
    const r = explainPending(cluster([p, ...bound]), { kind: "pod", namespace: "default", name: "mem" });
    // n3 fails both (fitsRequest returns every insufficient resource); histogram in Go's byte order
    expect(r.pods[0]!.summary!.message).toBe("0/3 nodes are available: 1 Too many pods, 3 Insufficient memory.");
  });

  // fit.go fitsRequest: the pod count is checked first, for every pod; then each requested resource
  it("a pod that requests nothing still needs a pod slot: 'Too many pods' on full nodes", () => {
    const full = (n: string, max: string) => node(n, { pods: max, cpu: "4" });
    const bound = [pod("a", { nodeName: "n1", containers: [] }, { phase: "Running" }), pod("b", { nodeName: "n1", containers: [] }, { phase: "Running" }), pod("c", { nodeName: "n2", containers: [] }, { phase: "Running" })];
    const p = pod("besteffort", { containers: [{ name: "c" }] });
    const b = emptyBundle({ tool: "test" });
    b.objects.nodes.push(full("n1", "2"), full("n2", "1"));
    b.objects.pods.push(p, ...bound);
    const r = explainPending(b, { kind: "pod", namespace: "default", name: "besteffort" });
    expect(r.pods[0]!.summary!.message).toBe("0/2 nodes are available: 2 Too many pods.");
  });

  it("limits without requests request the limits (the API server's defaulting of a hand-written pod)", () => {
    expect(podRequests(pod("p", { containers: [{ name: "c", resources: { limits: { cpu: "2", memory: "1Gi" }, requests: { memory: "512Mi" } } }] })))
      .toEqual(new Map([["cpu", 2000], ["memory", 512 * 2 ** 20 * 1000]]));
    expect(fitsResources(pod("p", { containers: [{ name: "c", resources: { limits: { cpu: "2" } } }] }), node("n1", { cpu: "1" }), []).reasons).toEqual(["Insufficient cpu"]);
  });

  it("a node whose allocatable has no pods entry allows none, as the scheduler reads it, and says why", () => {
    const bare: Node = { ...node("n1", { cpu: "4" }) };
    bare.status = { ...bare.status, allocatable: { cpu: "4" } } as Node["status"];
    const f = fitsResources(pod("p", { containers: [req({ cpu: "1" })] }), bare, []);
    expect(f.reasons).toEqual(["Too many pods"]);
    expect(f.detail).toMatch(/allocatable has no pods entry, which the scheduler takes as 0/);
  });

  // component-helpers resource PodRequests: pod-level requests of cpu, memory and hugepages replace the containers'
  // total (PodLevelResources, beta v1.34); a pod-level limit defaults its request
  it("pod-level resources (spec.resources) replace the containers' total, for the pending pod and for pods on the node", () => {
    const level = (spec: Record<string, unknown>, resources: Record<string, unknown>) => pod("p", { ...spec, resources });
    expect(podRequests(level({ containers: [req({ cpu: "500m" }), req({ cpu: "500m", memory: "1Gi" })] }, { requests: { cpu: "3" } })).get("cpu")).toBe(3000);
    expect(podRequests(level({ containers: [req({ cpu: "500m", memory: "1Gi" })] }, { requests: { cpu: "3" } })).get("memory")).toBe(2 ** 30 * 1000);
    expect(podRequests(level({ containers: [req({ cpu: "100m" })] }, { limits: { cpu: "2" } })).get("cpu")).toBe(2000);
    expect(fitsResources(level({ containers: [req({ cpu: "500m" })] }, { requests: { cpu: "3" } }), node("n1", { cpu: "2" }), []).reasons).toEqual(["Insufficient cpu"]);
    const onNode = pod("big", { nodeName: "n1", containers: [req({ cpu: "200m" })], resources: { requests: { cpu: "1500m" } } }, { phase: "Running" });
    expect(fitsResources(pod("p", { containers: [req({ cpu: "1" })] }), node("n1", { cpu: "2" }), [onNode]).reasons).toEqual(["Insufficient cpu"]);
  });

  it("a sidecar resized in place counts what its status says it was given (initContainerStatuses)", () => {
    const onNode = pod("side", {
      nodeName: "n1",
      containers: [req({ cpu: "100m" })],
      initContainers: [{ name: "proxy", restartPolicy: "Always", resources: { requests: { cpu: "100m" } } }],
    }, { phase: "Running", initContainerStatuses: [{ name: "proxy", resources: { requests: { cpu: "1500m" } }, allocatedResources: { cpu: "1500m" } }] });
    expect(podRequests(onNode).get("cpu")).toBe(1600);
    expect(fitsResources(pod("p", { containers: [req({ cpu: "1" })] }), node("n1", { cpu: "2" }), [onNode]).reasons).toEqual(["Insufficient cpu"]);
  });

  // framework.go RunFilterPluginsWithNominatedPods: a pod a preemption nominated to a node, of no lower priority, is
  // counted there
  it("a pod nominated to n1 (status.nominatedNodeName) with a higher priority takes its room; one of lower priority does not", () => {
    const nominee = (priority: number) => pod("q", { priority, containers: [req({ cpu: "1500m" })] }, { phase: "Pending", nominatedNodeName: "n1" });
    const run = (priority: number) => {
      const b = emptyBundle({ tool: "test" });
      b.objects.nodes.push(node("n1", { cpu: "2" }));
      b.objects.pods.push(pod("p", { priority: 0, containers: [req({ cpu: "1" })] }), nominee(priority));
      return explainPending(b, { kind: "pod", namespace: "default", name: "p" }).pods[0]!;
    };
    const higher = run(1000);
    expect(higher.summary!.message).toBe("0/1 nodes are available: 1 Insufficient cpu.");
    expect(higher.nodes[0]!.checks.find((c) => c.rule === "resources")!.detail).toMatch(/1 of them nominated to it \(default\/q\) by a preemption/);
    expect(run(-5).summary!.feasibleNodes).toEqual(["n1"]);
  });

  // default_preemption.go PodEligibleToPreemptOthers / podTerminatingByPreemption, schedule_one.go
  // evaluateNominatedNode: a pod nominated by a preemption waits for its victims to go, then is tried there first
  it("a pod nominated to n1 whose lower-priority victim is terminating there: the first line says it waits for that victim, and what it holds", () => {
    const msg = "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.";
    const run = (victimConditions: unknown[], victimPriority = 0) => {
      const victim = pod("victim", { nodeName: "n1", priority: victimPriority, containers: [req({ cpu: "3", memory: "512Mi" })] }, { phase: "Running", conditions: victimConditions });
      victim.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
      const p = pod("p", { priority: 1000, containers: [req({ cpu: "2" })] }, { phase: "Pending", nominatedNodeName: "n1" });
      const b = cluster([p, victim], [event("p", msg)], [node("n1", { cpu: "4", memory: "8Gi" })]);
      // the bundle keeps what this reads: nominatedNodeName, deletionTimestamp, priority, the conditions' reason
      return explainPending({ ...b, objects: allowListObjects(b.objects) }, { kind: "pod", namespace: "default", name: "p" });
    };
    const preempted = [{ type: "DisruptionTarget", status: "True", reason: "PreemptionByScheduler", message: "Kubernetes default-scheduler: preempting to accommodate a higher priority pod" }];
    const r = run(preempted);
    expect(r.answer).toBe(
      "Pod default/p is nominated to n1 by a preemption and waits for 1 lower-priority pod(s) evicted for it to terminate: default/victim (priority 0, requests cpu 3000m, memory 512Mi); " +
        "once they are gone the scheduler tries it there first (until then: 0/1 nodes are available: 1 Insufficient cpu).",
    );
    expect(r.pods[0]!.nominatedNodeName).toBe("n1");
    expect(r.findings.find((f) => f.id === "preemption-victims-terminating")!.evidence).toEqual([
      "Pod default/p: status.nominatedNodeName n1, priority 1000",
      "Pod default/victim on n1: deletionTimestamp set, DisruptionTarget PreemptionByScheduler",
    ]);
    // terminating for another reason (no PreemptionByScheduler condition), or not of lower priority: not a victim it waits for
    expect(run([]).answer).toBe("Pod default/p cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.");
    expect(run(preempted, 1000).findings.some((f) => f.id === "preemption-victims-terminating")).toBe(false);
  });

  it("a host port held by a pod on n1: NodePorts rejects n1 only", () => {
    const holder = pod("holder", { nodeName: "n1", containers: [{ name: "c", ports: [{ containerPort: 80, hostPort: 8080, protocol: "TCP" }] }] }, { phase: "Running" });
    const p = pod("web", { containers: [{ name: "c", ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: "3" } } }] });
    const r = explainPending(cluster([p, holder]), { kind: "pod", namespace: "default", name: "web" });
    const rows = Object.fromEntries(r.pods[0]!.nodes.map((n) => [n.node, n.rejectedBy?.plugin ?? "fits"]));
    expect(rows).toEqual({ n1: "NodePorts", n2: "fits", n3: "NodeResourcesFit" });
    expect(r.pods[0]!.nodes[0]!.checks.find((c) => c.rule === "hostPorts")!.detail).toBe("host port 8080/TCP (held by pod default/holder) in use");
  });

  it("host ports of ordinary init containers hold nothing; a sidecar's (restartPolicy Always) does (GetHostPorts)", () => {
    const init = (restartPolicy?: string) => [{ name: "i", ...(restartPolicy ? { restartPolicy } : {}), ports: [{ containerPort: 9100, hostPort: 9100 }] }];
    const setup = pod("setup", { nodeName: "n1", initContainers: init(), containers: [{ name: "c" }] }, { phase: "Running" });
    const side = pod("side", { nodeName: "n2", initContainers: init("Always"), containers: [{ name: "c" }] }, { phase: "Running" });
    const p = pod("agent", { initContainers: init(), containers: [{ name: "c", ports: [{ containerPort: 9100, hostPort: 9100 }] }] });
    const r = explainPending(cluster([p, setup, side]), { kind: "pod", namespace: "default", name: "agent" });
    const rows = Object.fromEntries(r.pods[0]!.nodes.map((n) => [n.node, n.rejectedBy?.plugin ?? "fits"]));
    expect(rows).toEqual({ n1: "fits", n2: "NodePorts", n3: "fits" });
  });

  // kubernetes#132040 (issue #132037): NodePorts counts sidecars' host ports from v1.34.0 and v1.33.6 (#133390); before,
  // node_ports.go and NodeInfo read pod.Spec.Containers only, on both sides
  describe("a sidecar's host port, by the scheduler's release (the newest kubelet's)", () => {
    const versioned = (version: string | undefined) => ["n1", "n2"].map((name) => {
      const n = node(name, { cpu: "4", memory: "8Gi" });
      if (version) (n.status as Record<string, unknown>).nodeInfo = { kubeletVersion: version };
      return n;
    });
    const holder = (name: string, on: string, sidecar: boolean) => {
      const c = { name: "c", ports: [{ containerPort: 8081, hostPort: 8081 }] };
      return pod(name, { nodeName: on, ...(sidecar ? { initContainers: [{ ...c, restartPolicy: "Always" }], containers: [{ name: "main" }] } : { containers: [c] }) }, { phase: "Running" });
    };
    const agent = pod("agent", { initContainers: [{ name: "proxy", restartPolicy: "Always", ports: [{ containerPort: 8081, hostPort: 8081 }] }], containers: [req({ cpu: "100m" })] });
    const run = (version: string | undefined, pods: Pod[]) => explainPending(cluster([agent, ...pods], [], versioned(version)), { kind: "pod", namespace: "default", name: "agent" }).pods[0]!;
    it.each([
      ["v1.32.9", "fits"],
      ["v1.33.5", "fits"],
      ["v1.33.6", "NodePorts"],
      ["v1.34.1", "NodePorts"],
      ["v1.31.0", "fits"],
    ])("the pending pod's sidecar port against app-container holders, at %s: %s", (version, verdict) => {
      const p = run(version, [holder("h1", "n1", false), holder("h2", "n2", false)]);
      expect(p.nodes.map((n) => n.rejectedBy?.plugin ?? "fits")).toEqual([verdict, verdict]);
      expect(p.notes!.some((x) => x.includes(`the scheduler's release is taken to be ${version}, the newest kubelet's version`))).toBe(true);
    });
    it("a holder's sidecar port on n1: counted at v1.34, not at v1.32", () => {
      const web = pod("agent", { containers: [{ name: "c", ports: [{ containerPort: 8081, hostPort: 8081 }] }] });
      const at = (version: string) => explainPending(cluster([web, holder("h1", "n1", true)], [], versioned(version)), { kind: "pod", namespace: "default", name: "agent" }).pods[0]!;
      expect(at("v1.34.1").nodes.map((n) => n.rejectedBy?.plugin ?? "fits")).toEqual(["NodePorts", "fits"]);
      expect(at("v1.32.9").nodes.map((n) => n.rejectedBy?.plugin ?? "fits")).toEqual(["fits", "fits"]);
      expect(at("v1.32.9").notes![0]).toMatch(/^Host ports of sidecars \(init containers with restartPolicy: Always\) are not counted by NodePorts, as before kubernetes#132040/);
    });
    it("v1.33 without a patch number, or no version: counted as current releases do, and the note says what decides it", () => {
      const pods = [holder("h1", "n1", false), holder("h2", "n2", false)];
      const noPatch = run("v1.33", pods);
      expect(noPatch.nodes.map((n) => n.rejectedBy?.plugin)).toEqual(["NodePorts", "NodePorts"]);
      expect(noPatch.notes!.join(" ")).toContain("undetermined: the newest kubelet's version, v1.33, has no patch number, and v1.33.0–v1.33.5 ignore them");
      const none = run(undefined, pods);
      expect(none.nodes.map((n) => n.rejectedBy?.plugin)).toEqual(["NodePorts", "NodePorts"]);
      expect(none.notes!.join(" ")).toContain("no node reports a kubelet version");
    });
  });

  // noderesources/fit.go fitsRequest skips the extended resources KubeSchedulerConfiguration ignores (ignoredResources,
  // ignoredResourceGroups, an extender's ignoredByScheduler): not in the bundle, so the reconciliation names them
  describe("an extended resource no node advertises, and an event that never calls it short", () => {
    const tainted = node("n2", { cpu: "4", memory: "8Gi" });
    tainted.spec = { taints: [{ key: "dedicated", value: "batch", effect: "NoSchedule" }] };
    const nodes = [node("n1", { cpu: "4", memory: "2Gi" }), tainted];
    const enc = pod("enc-0", { containers: [{ name: "c", resources: { requests: { cpu: "1", memory: "4Gi" }, limits: { "example.com/fpga": "1" } } }] });
    const tail = " preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.";
    const run = (msg: string) => explainPending(cluster([enc], [event("enc-0", msg + tail)], nodes), { kind: "pod", namespace: "default", name: "enc-0" }).pods[0]!;
    it("the only difference: the reconciliation names ignoredResources, ignoredResourceGroups and extenders", () => {
      const p = run("0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {dedicated: batch}.");
      expect(p.summary!.message).toBe("0/2 nodes are available: 1 Insufficient example.com/fpga, 1 Insufficient memory, 1 node(s) had untolerated taint {dedicated: batch}.");
      expect(p.reconciliation.status).toBe("disagree");
      expect(p.reconciliation.details).toHaveLength(1);
      const d = p.reconciliation.details[0]!;
      expect(d).toMatch(/^The event agrees but for extended resource\(s\) it never calls short: example\.com\/fpga \(the bundle finds 1 node\(s\) short of it\)\./);
      for (const setting of ["ignoredResources", "ignoredResourceGroups", "ignoredByScheduler", "KubeSchedulerConfiguration"]) expect(d).toContain(setting);
      expect(p.nodes[0]!.checks.find((c) => c.rule === "resources")!.detail).toContain("example.com/fpga: requests 1, free 0 of 0 (an extended resource: counted as short unless kube-scheduler's configuration ignores it");
    });
    it("another difference too, or a native resource: the counts are said plainly", () => {
      const p = run("0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: batch}.");
      expect(p.reconciliation.details.join(" ")).not.toContain("ignoredResources");
      expect(p.reconciliation.details).toContain('resources "Insufficient example.com/fpga": the event says 0 node(s), the bundle gives 1.');
      const native = explainPending(cluster([pod("big", { containers: [req({ cpu: "8" })] })], [event("big", "0/3 nodes are available: 3 Insufficient memory.")]), { kind: "pod", namespace: "default", name: "big" }).pods[0]!;
      expect(native.reconciliation.details.join(" ")).not.toContain("ignoredResources");
    });
  });

  it("schedulingGates: SchedulingGated in the first line", () => {
    const p = pod("gated", { containers: [], schedulingGates: [{ name: "example.com/quota" }] });
    const r = explainPending(cluster([p]), { kind: "pod", namespace: "default", name: "gated" });
    expect(r.answer.split("\n")[0]).toMatch(/^Pod default\/gated is SchedulingGated: .*\(example\.com\/quota\)/);
  });

  it("a schedulerName nobody answered for: said in the first line", () => {
    const p = pod("custom", { containers: [], schedulerName: "my-scheduler" });
    const r = explainPending(cluster([p]), { kind: "pod", namespace: "default", name: "custom" });
    expect(r.answer).toContain('asks for scheduler "my-scheduler" (spec.schedulerName) and has no FailedScheduling event or PodScheduled condition');
  });

  it("Events expired: the PodScheduled condition's message is the scheduler's last word", () => {
    const p = pod("old", { containers: [req({ cpu: "64" })] }, { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/3 nodes are available: 3 Insufficient cpu." }] });
    const r = explainPending(cluster([p]), { kind: "pod", namespace: "default", name: "old" });
    expect(r.pods[0]!.lastFailedScheduling?.source).toBe("PodScheduled condition (the Events have expired)");
    expect(r.pods[0]!.reconciliation.status).toBe("agree");
  });
});

describe("FailedScheduling wording, by text (kube-scheduler sources)", () => {
  it.each([
    ["Insufficient cpu", "resources"],
    ["Insufficient nvidia.com/gpu", "resources"],
    ["Too many pods", "resources"],
    ["node(s) didn't have free ports for the requested pod ports", "ports"],
    ["node(s) didn't satisfy plugin(s) [NodeAffinity]", "node-affinity"],
    ["node(s) didn't match scheduler-enforced node affinity", "scheduler-enforced-affinity"],
    ["node is filtered out by the prefilter result", "prefilter-result"],
    ["node declared features check failed - unsatisfied requirements: FeatureA, FeatureB", "node-declared-features"],
    ["cannot fit resource", "dra"],
    ["cannot schedule extended resource claim", "dra"],
    ["node(s) didn't satisfy plugin(s) [NodeResourcesFit]", "resources"],
    ["node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode", "volume-restrictions"],
    ["node(s) had no available disk", "volume-restrictions"],
    ["cannot allocate all claims", "dra"],
    ["node(s) didn't match Pod's node affinity/selector", "node-affinity"],
    ["node(s) were unschedulable", "unschedulable"],
  ])("%s → %s", (text, kind) => {
    expect(classifyReason(text).kind).toBe(kind);
  });
});

describe("live: the pod's own analysis costs a bounded number of requests", () => {
  it("pod/NAME --why-pending with requests on a fake 5,000-node / 50,000-pod cluster: one paginated pod list", async () => {
    const { startFakeApiServer } = await import("./helpers/fake_apiserver.ts");
    const { run } = await import("./helpers/live_cli.ts");
    const p = pod("big", { containers: [req({ cpu: "64" })] });
    const s = await startFakeApiServer({ objects: { pods: [p] }, synthetic: { nodes: 5000, podsPerNode: 10 } });
    try {
      const r = await run(["pod/big", "-n", "default", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      const podLists = s.requests.filter((x) => x.method === "GET" && x.path === "/api/v1/pods");
      console.info(`[pending-live] pod/big --why-pending on 5,000 nodes / 50,000 pods: ${s.requests.length} API requests, ${podLists.length} of them pages of the pod list`);
      expect(podLists.length).toBeGreaterThan(0);
      // one list in pages of 500 (the synthetic cluster holds ~55,000 pods with its system pods): no per-node reads
      expect(podLists.length).toBeLessThanOrEqual(120);
      expect(s.requests.length - podLists.length).toBeLessThan(20);
      expect(podLists[0]!.query.fieldSelector).toEqual(["status.phase!=Succeeded,status.phase!=Failed"]);
      const report = JSON.parse(r.stdout) as { pods: { summary: { message: string } }[] };
      // the synthetic nodes carry no allocatable: the resource check is not made, and the summary says "by the rules checked here"
      expect(report.pods[0]!.summary.message).toMatch(/^5000\/5000 nodes fit by the rules checked here/);
    } finally {
      await s.close();
    }
  }, 120_000);
});

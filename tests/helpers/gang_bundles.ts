// Builders shared by the gang scheduling tests (tests/pending_gang.test.ts: v1.35 spec.workloadRef naming a Workload;
// tests/pending_pod_group.test.ts: v1.36+ spec.schedulingGroup naming a PodGroup): the nodes and bundles of a
// --why-pending question, and the live runs against the fake API server (tests/helpers/fake_apiserver.ts).
import { expect, it } from "vitest";
import { type Bundle, emptyBundle } from "../../src/bundle/bundle.ts";
import type { KubeEvent, Node, Pod, PodGroup, Workload } from "../../src/model/k8s.ts";
import type { explainPending } from "../../src/pending/explain.ts";
import type { FakeApiServer } from "./fake_apiserver.ts";

/**
 * A Ready node as the API server returns it: hostname label, one InternalIP, `cpu` allocatable (16Gi memory, 110 pods),
 * and the kubelet's version, which the Pending question takes for the scheduler's release.
 * @param cpu allocatable CPU, a Kubernetes quantity (`"8"`).
 * @param version `status.nodeInfo.kubeletVersion` (`v1.35.1`).
 */
export function schedulerNode(name: string, cpu: string, version: string): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
    status: {
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
      conditions: [{ type: "Ready", status: "True" }],
      allocatable: { cpu, memory: "16Gi", pods: "110" },
      nodeInfo: { kubeletVersion: version },
    } as Node["status"],
  };
}

/** A pod group's `gang` policy of `minCount` pods (Workload `podGroups[].policy`, PodGroup `spec.schedulingPolicy`). */
export const gangPolicy = (minCount: number) => ({ gang: { minCount } });

/**
 * A bundle of the gang's objects: the nodes, pods, Workloads (v1.35) or PodGroups (v1.36+), events, and the warnings a
 * live collection leaves.
 */
export function gangBundle(
  pods: Pod[],
  groups: { workloads?: Workload[]; podGroups?: PodGroup[] },
  opts: { nodes: Node[]; warnings?: string[]; events?: KubeEvent[] },
): Bundle {
  const b = emptyBundle({});
  b.objects.nodes.push(...opts.nodes);
  b.objects.pods.push(...pods);
  b.objects.workloads.push(...(groups.workloads ?? []));
  b.objects.podGroups.push(...(groups.podGroups ?? []));
  b.objects.events.push(...(opts.events ?? []));
  b.warnings.push(...(opts.warnings ?? []));
  return b;
}

/** What {@link whyPendingLive} returns: the exit code, stderr and the JSON report. */
export interface LiveAnswer {
  code: number;
  stderr: string;
  report: ReturnType<typeof explainPending>;
}

/**
 * Runs `kubectl-netpath TARGET -n train --why-pending -o json` in process against a fake API server.
 * @param target `pod/NAME` (or another --why-pending target).
 */
export async function whyPendingLive(s: { kubeconfig: string }, target: string): Promise<LiveAnswer> {
  const { run } = await import("./live_cli.ts");
  const r = await run([target, "-n", "train", "--why-pending", "--kubeconfig", s.kubeconfig, "-o", "json"]);
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout || "{}") as ReturnType<typeof explainPending> };
}

/**
 * For each case, starts a fake API server that cannot give the group's object (its API not served, 404; or listing
 * it forbidden, 403), asks about `target`, and checks the answer states it: exit 0, a warning starting with the case's
 * words, the gang's `objectState` as given and its stage `undecided`.
 * @param start starts the server with the case's options.
 * @param cases [server options, expected objectState, the warning's first words].
 */
export async function expectGroupObjectUnreadStated<O>(
  start: (opts: O) => Promise<FakeApiServer>,
  target: string,
  cases: readonly (readonly [O, "api-not-served" | "forbidden", string])[],
): Promise<void> {
  for (const [opts, state, words] of cases) {
    await withFakeApiServer(start(opts), async (s) => {
      const { code, stderr, report } = await whyPendingLive(s, target);
      expect(code, stderr).toBe(0);
      expect(report.warnings!.find((w) => w.startsWith(words))).toBeDefined();
      expect(report.pods[0]!.gang).toMatchObject({ objectState: state, stage: "undecided" });
    });
  }
}

/**
 * Starts a fake API server holding a gang's cluster in namespace `train`: the nodes given, the group's pods w-0 and w-1
 * (2 CPU) and w-2 (16 CPU), a pod `solo` in no group, and `other-ns`, which names the same group from namespace
 * `elsewhere` (so it is no member), plus the group's objects.
 * @param pod a pod of the group (`inGroup`) or in none, requesting `cpu`.
 * @param groups the Workloads or PodGroups the server holds.
 * @param opts `servedVersions` of the fake API server (`{ workloads: "none" }`: 404); `deny`: resources whose list is forbidden (403).
 */
export async function startGangCluster(
  pod: (name: string, cpu: string, inGroup: boolean) => Pod,
  groups: { workloads?: Workload[]; podGroups?: PodGroup[] },
  opts: { nodes: Node[]; servedVersions?: Record<string, string>; deny?: readonly string[] },
): Promise<FakeApiServer> {
  const { startFakeApiServer } = await import("./fake_apiserver.ts");
  const pods = [pod("w-0", "2", true), pod("w-1", "2", true), pod("w-2", "16", true), pod("solo", "1", false), pod("other-ns", "1", true)];
  (pods[4]!.metadata as { namespace: string }).namespace = "elsewhere";
  return startFakeApiServer({
    objects: { nodes: opts.nodes, pods, ...groups },
    ...(opts.servedVersions ? { servedVersions: opts.servedVersions } : {}),
    ...(opts.deny ? { denials: opts.deny.map((d) => ({ verb: "list", resource: d })) } : {}),
  });
}

/**
 * Runs `body` against a fake API server and closes the server afterwards, whether `body` passed or threw.
 * @param started the server being started (e.g. {@link startGangCluster}'s promise).
 */
export async function withFakeApiServer(started: Promise<FakeApiServer>, body: (s: FakeApiServer) => Promise<void>): Promise<void> {
  const s = await started;
  try {
    await body(s);
  } finally {
    await s.close();
  }
}

/**
 * Checks the answer of a server that holds no group object the pod names: exit 0, the collection's not-found warning,
 * and the gang's `objectState` `not-found` at stage `pre-enqueue` (PreEnqueue holds the pod until the object exists).
 * @param warning the warning the collection leaves (gang.ts workloadNotFoundWarning, pod_group.ts podGroupNotFoundWarning).
 */
export async function expectGroupObjectNotFoundStated(started: Promise<FakeApiServer>, target: string, warning: string): Promise<void> {
  await withFakeApiServer(started, async (s) => {
    const { code, report } = await whyPendingLive(s, target);
    expect(code).toBe(0);
    expect(report.warnings).toContain(warning);
    expect(report.pods[0]!.gang).toMatchObject({ objectState: "not-found", stage: "pre-enqueue" });
  });
}

/**
 * Asks about `target` (a pod in no group) and checks that the collection requested no path containing `resourcePath`
 * (`/workloads`, `/podgroups`): the group objects are read only for a pod that names a group.
 */
export async function expectGroupObjectsNotReadFor(s: FakeApiServer, target: string, resourcePath: string): Promise<void> {
  const before = s.requests.length;
  expect((await whyPendingLive(s, target)).code).toBe(0);
  expect(s.requests.slice(before).some((x) => x.path.includes(resourcePath))).toBe(false);
}

/**
 * Registers the two live tests of a group object the collection cannot give: absent (the not-found warning, PreEnqueue
 * holds the pod; {@link expectGroupObjectNotFoundStated}) and unread (404 or 403, undecided;
 * {@link expectGroupObjectUnreadStated}), for pod `w-0` of {@link startGangCluster}'s cluster.
 * @param kind the object, in the tests' names (`Workload`, `PodGroup`).
 * @param cluster starts the cluster with the case's options (no options: the object absent).
 * @param notFoundWarning the collection's warning when the object is absent.
 * @param unread the unread test's name, and its cases as {@link expectGroupObjectUnreadStated} takes them.
 */
export function itStatesGroupObjectAbsence<O>(
  kind: string,
  cluster: (opts?: O) => Promise<FakeApiServer>,
  notFoundWarning: string,
  unread: { name: string; cases: readonly (readonly [O, "api-not-served" | "forbidden", string])[] },
): void {
  it(`the ${kind} absent: stated as not found, PreEnqueue holds the pod`, async () => {
    await expectGroupObjectNotFoundStated(cluster(), "pod/w-0", notFoundWarning);
  }, 60_000);

  it(unread.name, async () => {
    await expectGroupObjectUnreadStated(cluster, "pod/w-0", unread.cases);
  }, 60_000);
}

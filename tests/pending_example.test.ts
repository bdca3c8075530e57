/**
 * examples/azure-zones/bundle.yaml must say exactly what seed 000 shows: the node labels of `kubectl get node
 * --show-labels`, the node affinity terms and facts of both `kubectl describe pv`, the StorageClass parameters, the
 * claim, the pod and the FailedScheduling message. The excerpts are copied verbatim into tests/fixtures/pending.
 */
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { BUNDLE_FORMAT, BUNDLE_VERSION } from "../src/bundle/bundle.ts";
import { formatTerm } from "../src/pending/node_selector.ts";
import type { PersistentVolume } from "../src/model/k8s.ts";
import { azureBundle, pendingFixture } from "./fixtures/pending/objects.ts";

/** `kubectl get node --show-labels`: name → labels. */
function parseShowLabels(text: string): Map<string, { version: string; labels: Record<string, string> }> {
  const out = new Map<string, { version: string; labels: Record<string, string> }>();
  for (const line of text.trim().split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    const labels = Object.fromEntries((cols[5] ?? "").split(",").map((kv) => kv.split("=") as [string, string]));
    out.set(cols[0]!, { version: cols[4]!, labels });
  }
  return out;
}

/**
 * `kubectl describe pv`: top-level fields (`Name:`), the indented fields of `Source:` (`DiskName:`), the multi-line
 * `Labels:` (`k=v`) and `Annotations:` (`k: v`) blocks, and the "Term N:" lines of Node Affinity joined per term.
 */
function parseDescribePv(text: string) {
  const fields: Record<string, string> = {};
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const terms: string[][] = [];
  let block: "labels" | "annotations" | "terms" | "" = "";
  const addTo = (b: typeof block, v: string) => {
    if (b === "labels" && v !== "<none>") {
      const [k, val] = v.split("=");
      labels[k!] = val!;
    } else if (b === "annotations" && v !== "<none>") {
      const i = v.indexOf(": ");
      annotations[v.slice(0, i)] = v.slice(i + 2);
    } else if (b === "terms") terms[terms.length - 1]!.push(v);
  };
  for (const line of text.split("\n")) {
    const top = /^([A-Z][A-Za-z ]+):\s*(.*)$/.exec(line);
    const term = /^\s+Term (\d+):\s+(.*)$/.exec(line);
    const sub = /^\s{4}([A-Z][A-Za-z]+):\s*(.*)$/.exec(line);
    if (top) {
      fields[top[1]!] = top[2]!.trim();
      block = top[1] === "Labels" ? "labels" : top[1] === "Annotations" ? "annotations" : "";
      if (block && top[2]!.trim()) addTo(block, top[2]!.trim());
    } else if (term) {
      block = "terms";
      terms.push([term[2]!.trim()]);
    } else if (sub) {
      fields[sub[1]!] = sub[2]!.trim();
      block = "";
    } else if (block && /^\s{10,}\S/.test(line)) {
      addTo(block, line.trim());
    }
  }
  return { fields, labels, annotations, terms: terms.map((t) => t.join(", ")) };
}

const bundle = azureBundle();
const pvByName = (name: string): PersistentVolume => bundle.objects.persistentVolumes.find((v) => v.metadata.name === name)!;

describe("examples/azure-zones/bundle.yaml against seed 000", () => {
  test("is a Bundle of the current format", () => {
    expect(bundle.format).toBe(BUNDLE_FORMAT);
    expect(bundle.version).toBe(BUNDLE_VERSION);
    expect(bundle.nodes).toEqual([]);
    expect(bundle.warnings).toEqual([]);
    expect(Object.keys(bundle.objects).sort()).toEqual([
      "configMaps",
      "endpointSlices",
      "events",
      "nodes",
      "persistentVolumeClaims",
      "persistentVolumes",
      "pods",
      "services",
      "storageClasses",
    ]);
    expect(bundle.capture.notes?.[0]).toMatch(/^Seed 000/);
  });

  test("node labels and versions are those of `kubectl get node --show-labels`", () => {
    const seed = parseShowLabels(pendingFixture("seed000-get-node-show-labels.txt"));
    expect(bundle.objects.nodes.map((n) => n.metadata.name)).toEqual([...seed.keys()]);
    for (const n of bundle.objects.nodes) {
      expect(n.metadata.labels).toEqual(seed.get(n.metadata.name)!.labels);
      expect(n.status!.nodeInfo!.kubeletVersion).toBe(seed.get(n.metadata.name)!.version);
    }
  });

  for (const [file, name, claim] of [
    ["seed000-describe-pv-unzoned.txt", "pvc-0a20ee9f-0c34-11e9-b302-000d3aa0aa40", "default/md"],
    ["seed000-describe-pv-zoned.txt", "pvc-6b8d1e52-0c45-11e9-b302-000d3aa0aa40", "default/md-zoned"],
  ] as const) {
    test(`PersistentVolume ${name} is its \`kubectl describe pv\``, () => {
      const seed = parseDescribePv(pendingFixture(file));
      const v = pvByName(name);
      expect(seed.fields["Name"]).toBe(name);
      expect(v.spec!.nodeAffinity!.required!.nodeSelectorTerms.map(formatTerm)).toEqual(seed.terms);
      expect(v.metadata.labels ?? {}).toEqual(seed.labels);
      expect(v.spec!.capacity!.storage).toBe(seed.fields["Capacity"]);
      expect(v.spec!.volumeMode).toBe(seed.fields["VolumeMode"]);
      expect(v.spec!.persistentVolumeReclaimPolicy).toBe(seed.fields["Reclaim Policy"]);
      expect(v.status!.phase).toBe(seed.fields["Status"]);
      expect(v.spec!.accessModes).toEqual(seed.fields["Access Modes"] === "RWO" ? ["ReadWriteOnce"] : []);
      const disk = v.spec!["azureDisk"] as { diskName: string; diskURI: string; kind: string; cachingMode: string };
      expect(disk.diskName).toBe(seed.fields["DiskName"]);
      expect(disk.diskURI).toBe(seed.fields["DiskURI"]);
      expect(disk.kind).toBe(seed.fields["Kind"]);
      expect(disk.cachingMode).toBe(seed.fields["CachingMode"]);
      // The seed's claim is default/md for both; the zoned variant is renamed in the bundle (see capture.notes).
      expect(seed.fields["Claim"]).toBe("default/md");
      expect(`${v.spec!.claimRef!.namespace}/${v.spec!.claimRef!.name}`).toBe(claim);
      expect(v.metadata.annotations).toEqual(seed.annotations);
      expect((v.metadata as { finalizers?: string[] }).finalizers).toEqual([seed.fields["Finalizers"]!.replace(/^\[|\]$/g, "")]);
    });
  }

  test("StorageClasses carry the seed's parameters (zoned false / true)", () => {
    for (const [file, name] of [["seed000-storageclass-zoned-false.yaml", "default"], ["seed000-storageclass-zoned-true.yaml", "default-zoned"]] as const) {
      const seed = parse(pendingFixture(file));
      const sc = bundle.objects.storageClasses.find((c) => c.metadata.name === name)!;
      expect(sc.parameters).toEqual(seed.parameters);
      expect(sc.provisioner).toBe(seed.provisioner);
    }
    const def = bundle.objects.storageClasses.find((c) => c.metadata.name === "default")!;
    expect(def.metadata.annotations).toEqual(parse(pendingFixture("seed000-storageclass-zoned-false.yaml")).metadata.annotations);
  });

  test("claim md and pod busybox are the seed's manifests plus what the API adds", () => {
    const seedClaim = parse(pendingFixture("seed000-pvc-md.yaml"));
    const md = bundle.objects.persistentVolumeClaims.find((c) => c.metadata.name === "md")!;
    expect(md.spec).toMatchObject(seedClaim.spec);
    const seedPod = parse(pendingFixture("seed000-pod-busybox.yaml"));
    const busybox = bundle.objects.pods.find((p) => p.metadata.name === "busybox")!;
    expect(busybox.spec!.containers![0]).toMatchObject({ name: "busybox", image: "busybox:latest", resources: seedPod.spec.containers[0].resources });
    expect(busybox.spec!.volumes![0]).toEqual(seedPod.spec.volumes[0]);
  });

  test("the FailedScheduling event is the seed's", () => {
    const line = pendingFixture("seed000-failed-scheduling-event.txt").trim();
    const e = bundle.objects.events.find((x) => x.reason === "FailedScheduling")!;
    expect(line.endsWith(e.message!)).toBe(true);
    expect(line).toMatch(/Warning\s+FailedScheduling\s+Pod\s+/);
    expect(e.involvedObject).toMatchObject({ kind: "Pod", name: "busybox", namespace: "default" });
  });
});

/**
 * Reading and writing bundles (docs/bundle.md), without I/O: the caller hands in file contents.
 *
 * Two forms:
 * - one file, JSON or YAML, of the {@link Bundle} shape (what `capture -o FILE` writes);
 * - a directory: any number of `*.yaml` / `*.yml` / `*.json` files of Kubernetes objects (single objects, `kind: List`,
 *   or multi-document YAML, as `kubectl get -o yaml` prints), optional `capture.yaml` with {@link CaptureInfo}, and
 *   per-node raw dumps at `nodes/<node>/<section>[.txt|.json]` where `<section>` is one of {@link SECTION_NAMES}
 *   (e.g. `nodes/k8s1/iptables-save.txt`). A file `nodes/<node>/<section>.exit` may hold the exit code.
 * Unknown files and keys are reported in `warnings`, never fatal.
 *
 * Runtime-neutral: no I/O (YAML via `yaml`).
 * @module
 */
import { parseAllDocuments, stringify as toYaml } from "yaml";
import type { KubeObject } from "../model/k8s.ts";
import { compareText } from "../model/order.ts";
import {
  type Bundle,
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  type BundleObjects,
  type CaptureInfo,
  emptyBundle,
  type NodeCapture,
  SECTION_NAMES,
  type SectionName,
} from "./bundle.ts";

/** A bundle that cannot be read; the message says what is wrong and what to do. */
export class BundleError extends Error {
  override name = "BundleError";
}

/** kind → the list of {@link BundleObjects} it goes to. */
const KIND_TO_LIST: Record<string, keyof BundleObjects> = {
  Service: "services",
  EndpointSlice: "endpointSlices",
  Pod: "pods",
  Node: "nodes",
  ConfigMap: "configMaps",
  PersistentVolumeClaim: "persistentVolumeClaims",
  PersistentVolume: "persistentVolumes",
  StorageClass: "storageClasses",
  Event: "events",
};

function parseStructured(text: string, name: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return [JSON.parse(text)];
    } catch (e) {
      throw new BundleError(`${name}: not valid JSON (${(e as Error).message}); is the file complete?`);
    }
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const out: unknown[] = [];
  for (const d of list) {
    if (d.errors.length > 0) {
      const err = d.errors[0]!;
      throw new BundleError(`${name}: not valid YAML: ${err.message.split("\n")[0]}`);
    }
    const v = d.toJS({ maxAliasCount: 100 });
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

function isBinary(text: string): boolean {
  return text.indexOf("\u0000") !== -1;
}

/**
 * Adds Kubernetes objects (single, `List`, or `*List`) to a bundle's object lists.
 * @returns the number of objects added.
 */
export function addObjects(bundle: Bundle, value: unknown, origin: string): number {
  if (value === null || typeof value !== "object") {
    bundle.warnings.push(`${origin}: not a Kubernetes object; ignored`);
    return 0;
  }
  const obj = value as { kind?: string; items?: unknown[]; metadata?: unknown; apiVersion?: string };
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + addObjects(bundle, v, origin), 0);
  if (typeof obj.kind === "string" && obj.kind.endsWith("List") && Array.isArray(obj.items)) {
    const itemKind = obj.kind === "List" ? undefined : obj.kind.slice(0, -4);
    let n = 0;
    for (const item of obj.items) {
      const it = item as { kind?: string };
      if (itemKind && it && typeof it === "object" && it.kind === undefined) it.kind = itemKind;
      n += addObjects(bundle, item, origin);
    }
    return n;
  }
  const list = typeof obj.kind === "string" ? KIND_TO_LIST[obj.kind] : undefined;
  if (!list) {
    bundle.warnings.push(`${origin}: kind ${obj.kind ?? "(none)"} is not used by kubectl-netpath; ignored`);
    return 0;
  }
  if (!obj.metadata || typeof (obj.metadata as { name?: unknown }).name !== "string") {
    bundle.warnings.push(`${origin}: a ${obj.kind} without metadata.name; ignored`);
    return 0;
  }
  (bundle.objects[list] as KubeObject[]).push(value as KubeObject);
  return 1;
}

/**
 * Decodes a one-file bundle (JSON or YAML).
 * @param text the file's content.
 * @param name the file name, for messages.
 * @returns the bundle, with `warnings` for unknown keys.
 * @throws {BundleError} when the file is empty, binary, not JSON/YAML, not a bundle, or of a newer format version.
 */
export function decodeBundle(text: string, name: string): Bundle {
  if (text.trim() === "") throw new BundleError(`${name} is empty: expected a kubectl-netpath bundle (JSON or YAML)`);
  if (isBinary(text)) throw new BundleError(`${name} is a binary file, not a kubectl-netpath bundle (JSON or YAML)`);
  const docs = parseStructured(text, name);
  const doc = docs[0] as Partial<Bundle> & Record<string, unknown> | undefined;
  if (!doc || typeof doc !== "object" || doc.format !== BUNDLE_FORMAT) {
    const kind = doc && typeof doc === "object" ? (doc as { kind?: string }).kind : undefined;
    if (kind) {
      // A plain `kubectl get -o yaml` file: accept it as a bundle of objects only.
      const b = emptyBundle({ notes: [`objects read from ${name}`] });
      for (const d of docs) addObjects(b, d, name);
      return b;
    }
    throw new BundleError(`${name} is not a kubectl-netpath bundle (no "format: ${BUNDLE_FORMAT}"); write one with \`kubectl netpath capture\``);
  }
  if (typeof doc.version !== "number" || doc.version > BUNDLE_VERSION) {
    throw new BundleError(`${name} has bundle format version ${String(doc.version)}, newer than this kubectl-netpath understands (${BUNDLE_VERSION}); upgrade kubectl-netpath`);
  }
  const bundle = emptyBundle((doc.capture ?? {}) as CaptureInfo);
  bundle.version = doc.version;
  for (const key of Object.keys(doc)) {
    if (!["format", "version", "capture", "objects", "nodes", "warnings"].includes(key)) bundle.warnings.push(`${name}: unknown key "${key}" ignored`);
  }
  const objects = (doc.objects ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(objects)) {
    if (!(key in bundle.objects)) {
      bundle.warnings.push(`${name}: unknown object list "objects.${key}" ignored`);
      continue;
    }
    if (!Array.isArray(value)) {
      bundle.warnings.push(`${name}: objects.${key} is not a list; ignored`);
      continue;
    }
    (bundle.objects[key as keyof BundleObjects] as unknown[]).push(...value);
  }
  for (const [i, n] of (Array.isArray(doc.nodes) ? doc.nodes : []).entries()) {
    const node = n as Partial<NodeCapture>;
    if (!node || typeof node.name !== "string") {
      bundle.warnings.push(`${name}: nodes[${i}] has no name; ignored`);
      continue;
    }
    const sections: NodeCapture["sections"] = {};
    for (const [sec, out] of Object.entries(node.sections ?? {})) {
      if (!(SECTION_NAMES as readonly string[]).includes(sec)) {
        bundle.warnings.push(`${name}: node ${node.name}: unknown section "${sec}" ignored`);
        continue;
      }
      if (!out || typeof (out as { stdout?: unknown }).stdout !== "string") {
        bundle.warnings.push(`${name}: node ${node.name}: section ${sec} has no stdout text; ignored`);
        continue;
      }
      sections[sec as SectionName] = out;
    }
    const capture: NodeCapture = { name: node.name, sections };
    if (node.source) capture.source = node.source;
    if (node.error) capture.error = node.error;
    bundle.nodes.push(capture);
  }
  if (Array.isArray(doc.warnings)) bundle.warnings.unshift(...doc.warnings.map(String));
  return bundle;
}

/** One file of a bundle directory, as read by the caller. */
export interface BundleFile {
  /** Path relative to the bundle directory, with `/` separators. */
  path: string;
  text: string;
}

/**
 * Builds a bundle from the files of a bundle directory.
 * @param files every file below the directory.
 * @param dirName the directory name, for messages.
 * @returns the bundle; unreadable and unknown files are listed in `warnings`.
 * @throws {BundleError} when the directory holds neither objects nor node dumps.
 */
export function bundleFromFiles(files: BundleFile[], dirName: string): Bundle {
  const bundle = emptyBundle({});
  const nodes = new Map<string, NodeCapture>();
  const exits = new Map<string, number>();
  const sorted = [...files].sort((a, b) => compareText(a.path, b.path));
  let objects = 0;
  for (const f of sorted) {
    const parts = f.path.split("/");
    if (parts[0] === "nodes" && parts.length === 3) {
      const node = parts[1]!;
      const base = parts[2]!;
      const section = base.replace(/\.(txt|json|out|exit)$/, "");
      if (!(SECTION_NAMES as readonly string[]).includes(section)) {
        bundle.warnings.push(`${dirName}/${f.path}: unknown section "${section}" (want one of ${SECTION_NAMES.join(", ")}); ignored`);
        continue;
      }
      if (base.endsWith(".exit")) {
        exits.set(`${node}/${section}`, Number(f.text.trim()));
        continue;
      }
      if (isBinary(f.text)) {
        bundle.warnings.push(`${dirName}/${f.path}: binary data; ignored`);
        continue;
      }
      const capture = nodes.get(node) ?? { name: node, sections: {}, source: { kind: "file" as const, detail: `${dirName}/nodes/${node}` } };
      capture.sections[section as SectionName] = { stdout: f.text };
      nodes.set(node, capture);
      continue;
    }
    if (!/\.(ya?ml|json)$/.test(f.path)) {
      if (!/(^|\/)README(\.md)?$/i.test(f.path)) bundle.warnings.push(`${dirName}/${f.path}: not a .yaml/.json file; ignored`);
      continue;
    }
    if (isBinary(f.text)) {
      bundle.warnings.push(`${dirName}/${f.path}: binary data; ignored`);
      continue;
    }
    let docs: unknown[];
    try {
      docs = parseStructured(f.text, `${dirName}/${f.path}`);
    } catch (e) {
      bundle.warnings.push((e as Error).message + "; ignored");
      continue;
    }
    if (/(^|\/)capture\.ya?ml$/.test(f.path) && docs[0] && typeof docs[0] === "object") {
      bundle.capture = docs[0] as CaptureInfo;
      continue;
    }
    if ((docs[0] as { format?: unknown } | undefined)?.format === BUNDLE_FORMAT) {
      // A one-file bundle inside a directory: merge it.
      const inner = decodeBundle(f.text, `${dirName}/${f.path}`);
      bundle.capture = { ...inner.capture, ...bundle.capture };
      for (const key of Object.keys(inner.objects) as (keyof BundleObjects)[]) {
        (bundle.objects[key] as unknown[]).push(...inner.objects[key]);
        objects += inner.objects[key].length;
      }
      for (const n of inner.nodes) nodes.set(n.name, n);
      bundle.warnings.push(...inner.warnings);
      continue;
    }
    for (const d of docs) objects += addObjects(bundle, d, `${dirName}/${f.path}`);
  }
  for (const [key, code] of exits) {
    const [node, section] = key.split("/") as [string, SectionName];
    const out = nodes.get(node)?.sections[section];
    if (out) out.exitCode = code;
  }
  bundle.nodes = [...nodes.values()];
  if (objects === 0 && bundle.nodes.length === 0) {
    throw new BundleError(`${dirName} holds no Kubernetes objects (*.yaml, *.json) and no node dumps (nodes/<node>/<section>.txt): not a bundle directory`);
  }
  return bundle;
}

/**
 * Encodes a bundle for `capture -o FILE`.
 * @param bundle the bundle.
 * @param format "json" (default for `.json`) or "yaml".
 * @returns the text.
 */
export function encodeBundle(bundle: Bundle, format: "json" | "yaml"): string {
  const doc = { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, capture: bundle.capture, objects: bundle.objects, nodes: bundle.nodes, warnings: bundle.warnings };
  return format === "json" ? JSON.stringify(doc, null, 2) + "\n" : toYaml(doc, { lineWidth: 0 });
}

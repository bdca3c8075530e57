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
import { parseAllDocuments } from "yaml";
import { serializeExact } from "../model/exact_serialize.ts";
import type { KubeObject } from "../model/k8s.ts";
import { pushAll } from "../model/arrays.ts";
import { compareText } from "../model/order.ts";
import {
  type Bundle,
  BUNDLE_FORMAT,
  BUNDLE_END,
  BUNDLE_VERSION,
  type BundleObjects,
  type CaptureInfo,
  emptyBundle,
  type NodeCapture,
  SECTION_NAMES,
  type SectionName,
} from "./bundle.ts";
import { checkObjectShape } from "./shape.ts";

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
  DaemonSet: "daemonSets",
  Namespace: "namespaces",
  ResourceClaim: "resourceClaims",
  CSINode: "csiNodes",
  CSIDriver: "csiDrivers",
  CSIStorageCapacity: "csiStorageCapacities",
  VolumeAttributesClass: "volumeAttributesClasses",
  Workload: "workloads",
  PodGroup: "podGroups",
};

/**
 * Whether a bundle holds objects of this kind (`kind` of an object, or `List` of them): Service, EndpointSlice, Pod,
 * Node, … — the kinds {@link bundleFromFiles} files into {@link BundleObjects}.
 */
export function isBundleKind(kind: string): boolean {
  return kind === "List" || Object.hasOwn(KIND_TO_LIST, kind);
}

/** list of {@link BundleObjects} → the kind it holds. */
const LIST_TO_KIND: Record<string, string> = Object.fromEntries(Object.entries(KIND_TO_LIST).map(([k, l]) => [l, k]));

/** A value as a message names it: `the string "1"`, `null`, `a list`. */
function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "missing";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a map";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  return `${typeof v} ${String(v)}`;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The top-level keys of a one-file bundle: `version` a whole number, `capture` a map, `objects` a map of lists,
 * `nodes` and `warnings` lists.
 * @throws {BundleError} naming the key, what it is and what is wanted.
 */
function checkTopLevel(doc: Record<string, unknown>, name: string): asserts doc is Record<string, unknown> & { version: number } {
  const v = doc.version;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new BundleError(`${name}: version is ${describeValue(v)}: want a whole number, the bundle format version (\`version: ${BUNDLE_VERSION}\`, no quotes)`);
  }
  for (const [key, ok, wanted] of [
    ["capture", isMap, "a map (capturedAt, context, …)"],
    ["objects", isMap, "a map of object lists (services, endpointSlices, pods, nodes, …)"],
    ["nodes", Array.isArray, "a list of node captures ({name, sections})"],
    ["warnings", Array.isArray, "a list of strings"],
  ] as const) {
    const value = doc[key];
    if (value !== undefined && value !== null && !ok(value)) throw new BundleError(`${name}: ${key} is ${describeValue(value)}: want ${wanted}`);
  }
}

/**
 * Whether text is written as a CIDR: an IPv4 address (each part 0–255) with a prefix of 0–32, or an IPv6 address's
 * characters with a prefix of 0–128. The analyses read it with ip-cidr (model/ip.ts); this check keeps that library out
 * of what completion loads.
 */
function looksLikeCIDR(s: string): boolean {
  const m = /^([0-9.]+|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)\/(\d{1,3})$/.exec(s);
  if (!m) return false;
  if (m[1]!.includes(":")) return Number(m[2]) <= 128;
  const parts = m[1]!.split(".");
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255) && Number(m[2]) <= 32;
}

/**
 * A bundle's capture info (a one-file bundle's `capture`, a directory's `capture.yaml`): a map whose fields the tool
 * reads have their types, `clusterCIDRs` a list of CIDRs (`10.244.0.0/16`), `notes` a list of strings.
 * @param v the parsed value (undefined or null: none).
 * @param where how the message names it (`b.json: capture`, `DIR/capture.yaml`).
 * @param field how it names a field of it, before the field's name (`b.json: capture.`, `DIR/capture.yaml: `).
 * @returns the capture info.
 * @throws {BundleError} naming the field, what it is and what is wanted.
 */
function checkCaptureInfo(v: unknown, where: string, field: string): CaptureInfo {
  if (v === undefined || v === null) return {};
  if (!isMap(v)) throw new BundleError(`${where} is ${describeValue(v)}: want a map (capturedAt, context, tool, command, clusterCIDRs, notes)`);
  for (const key of ["capturedAt", "context", "tool", "command"] as const) {
    const x = v[key];
    if (x !== undefined && x !== null && typeof x !== "string") throw new BundleError(`${field}${key} is ${describeValue(x)}: want a string`);
  }
  for (const key of ["clusterCIDRs", "notes"] as const) {
    const list = v[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw new BundleError(`${field}${key} is ${describeValue(list)}: want a list${key === "clusterCIDRs" ? " of CIDRs such as [10.244.0.0/16]" : " of strings"}`);
    list.forEach((x, i) => {
      if (typeof x !== "string") throw new BundleError(`${field}${key}[${i}] is ${describeValue(x)}: want a string`);
      if (key === "clusterCIDRs" && !looksLikeCIDR(x)) throw new BundleError(`${field}${key}[${i}] is ${describeValue(x)}: want a CIDR such as 10.244.0.0/16`);
    });
  }
  return v as CaptureInfo;
}

/**
 * One entry of a one-file bundle's `nodes`: a map with `name`, an optional `error` text, and `sections`, a map of
 * section name → {stdout text, optional exitCode number or null}.
 * @throws {BundleError} naming the field path (`nodes[0].sections.iptables-save.stdout is missing: …`).
 */
function checkNodeCapture(n: unknown, path: string, name: string): void {
  const fail = (what: string) => {
    throw new BundleError(`${name}: ${what}`);
  };
  if (!isMap(n)) return fail(`${path} is ${describeValue(n)}: want a node capture ({name, sections})`);
  if (typeof n.name !== "string" || n.name === "") fail(`${path}.name is ${describeValue(n.name)}: want the Node's name`);
  if (n.error !== undefined && n.error !== null && typeof n.error !== "string") fail(`${path}.error is ${describeValue(n.error)}: want a string`);
  if (n.sections === undefined || n.sections === null) return;
  if (!isMap(n.sections)) return fail(`${path}.sections is ${describeValue(n.sections)}: want a map of section name → {stdout, exitCode}`);
  for (const [sec, out] of Object.entries(n.sections)) {
    const at = `${path}.sections.${sec}`;
    if (!isMap(out)) return fail(`${at} is ${describeValue(out)}: want {stdout, exitCode}`);
    if (typeof out.stdout !== "string") fail(`${at}.stdout is ${describeValue(out.stdout)}: want the command's output text`);
    if (out.exitCode !== undefined && out.exitCode !== null && !(typeof out.exitCode === "number" && Number.isInteger(out.exitCode) && out.exitCode >= 0 && out.exitCode <= 255)) {
      fail(`${at}.exitCode is ${describeValue(out.exitCode)}: want the command's exit status, a whole number from 0 to 255`);
    }
    // null: the stream ended before the command reported its status, which capture always writes with truncated
    if (out.exitCode === null && out.truncated !== true) fail(`${at}.exitCode is null (the stream ended before the command's status) but the section is not marked truncated: set truncated: true, or give the exit status`);
    if (out.stderr !== undefined && out.stderr !== null && typeof out.stderr !== "string") fail(`${at}.stderr is ${describeValue(out.stderr)}: want a string`);
    for (const k of ["durationMs", "timedOutAfterSeconds"] as const) {
      const v = out[k];
      if (v !== undefined && v !== null && !(typeof v === "number" && Number.isFinite(v) && v >= 0)) fail(`${at}.${k} is ${describeValue(v)}: want a number ≥ 0`);
    }
    if (out.timedOutAfterSeconds !== undefined && out.timedOutAfterSeconds !== null && out.truncated !== true) {
      fail(`${at} says timedOutAfterSeconds but not truncated: a section stopped at its time limit is only a part (set truncated: true)`);
    }
  }
}

/**
 * JSON.parse's complaint in the same words on every runtime: V8 before 12 ends it `in JSON at position 43` (Node 20),
 * later V8 (Node 22+, Deno 2) adds ` (line 1 column 44)`. The position is turned into a line and column here, so a
 * bundle's error reads the same everywhere.
 * @param text the text JSON.parse was given.
 * @param message its SyntaxError's message.
 * @returns e.g. `Expected ',' or '}' after property value at line 1, column 44`, or the message as it was when it names
 *   no position (`Unexpected end of JSON input`).
 */
function jsonErrorText(text: string, message: string): string {
  const m = /^(.*?)(?: in JSON)? at position (\d+)(?: \(line \d+ column \d+\))?$/s.exec(message);
  if (!m) return message;
  const at = Math.min(Number(m[2]), text.length);
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  const column = at - (before.lastIndexOf("\n") + 1) + 1;
  return `${m[1]} at line ${line}, column ${column}`;
}

function parseStructured(text: string, name: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return [JSON.parse(text)];
    } catch (e) {
      throw new BundleError(`${name}: not valid JSON (${jsonErrorText(text, (e as Error).message)}); is the file complete?`);
    }
  }
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const out: unknown[] = [];
  for (const d of list) {
    if (d.errors.length > 0) {
      const err = d.errors[0]!;
      throw new BundleError(`${name}: not valid YAML: ${err.message.split("\n")[0]!.replace(/:$/, "")}; is the file complete?`);
    }
    let v: unknown;
    try {
      v = d.toJS({ maxAliasCount: 100 });
    } catch (e) {
      // yaml refuses a document whose aliases expand too much (a "billion laughs" document).
      throw new BundleError(`${name}: its YAML aliases expand too much (${(e as Error).message}): no bundle uses aliases so; check the file`);
    }
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
  if (obj.kind === undefined && Array.isArray(obj.items)) {
    // kubectl get -o yaml prints a list's `kind: List` after its items: a list without it was cut (a copy or transfer
    // that stopped early) and still parses, with fewer objects; answered, it would be answered from part of them
    throw new BundleError(`${origin}: a list of ${obj.items.length} item(s) without its kind, which kubectl prints after the items: the file looks cut; copy it again (or add "kind: List" if it was written by hand)`);
  }
  const list = typeof obj.kind === "string" ? KIND_TO_LIST[obj.kind] : undefined;
  if (!list && typeof obj.kind === "string" && obj.kind.endsWith("List")) {
    // `items: null` (or missing): an empty list as kubectl prints none; not an unknown kind
    bundle.warnings.push(`${origin}: a ${obj.kind} with no items (items is ${obj.items === undefined ? "missing" : describeValue(obj.items)}); nothing read from it`);
    return 0;
  }
  if (!list) {
    bundle.warnings.push(`${origin}: kind ${obj.kind ?? "(none)"} is not used by kubectl-netpath; ignored`);
    return 0;
  }
  if (!obj.metadata || typeof (obj.metadata as { name?: unknown }).name !== "string") {
    bundle.warnings.push(`${origin}: a ${obj.kind} without metadata.name; ignored`);
    return 0;
  }
  const bad = checkObjectShape(value, obj.kind!, `${obj.kind} ${JSON.stringify((obj.metadata as { name: string }).name)}`);
  if (bad) throw new BundleError(`${origin}: ${bad}; fix that object or export it again (kubectl get -o yaml)`);
  (bundle.objects[list] as KubeObject[]).push(value as KubeObject);
  return 1;
}

/**
 * Decodes a one-file bundle (JSON or YAML).
 * @param text the file's content.
 * @param name the file name, for messages.
 * @returns the bundle, with `warnings` for unknown keys.
 * @throws {BundleError} when the file is empty, binary, not JSON/YAML, not a bundle, of a newer format version, or
 *   (version 2 on) without its last key `end` ({@link BUNDLE_END}): cut short.
 */
export function decodeBundle(text: string, name: string): Bundle {
  if (text.trim() === "") throw new BundleError(`${name} is empty: expected a kubectl-netpath bundle (JSON or YAML); check the path, or write one with \`kubectl netpath capture\``);
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
  checkTopLevel(doc, name);
  if (doc.version > BUNDLE_VERSION) {
    throw new BundleError(`${name} has bundle format version ${String(doc.version)}, newer than this kubectl-netpath understands (${BUNDLE_VERSION}); upgrade kubectl-netpath`);
  }
  // version 2 on: `end` is written last; without it the rest of the file may be missing (a cut YAML still parses)
  if (doc.version >= 2 && doc.end !== BUNDLE_END) {
    throw new BundleError(
      `${name} ends before its last line (\`end: ${BUNDLE_END}\`, which capture writes after everything else): the file was cut, e.g. by a copy or transfer that stopped; copy it again, or capture again`,
    );
  }
  const bundle = emptyBundle(checkCaptureInfo(doc.capture, `${name}: capture`, `${name}: capture.`));
  bundle.version = doc.version;
  for (const key of Object.keys(doc)) {
    if (!["format", "version", "capture", "objects", "nodes", "warnings", "end"].includes(key)) bundle.warnings.push(`${name}: unknown key "${key}" ignored`);
  }
  const objects = (doc.objects ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(objects)) {
    if (!(key in bundle.objects)) {
      bundle.warnings.push(`${name}: unknown object list "objects.${key}" ignored`);
      continue;
    }
    const kind = LIST_TO_KIND[key]!;
    if (!Array.isArray(value)) throw new BundleError(`${name}: objects.${key} is ${describeValue(value)}: want a list of ${kind} objects`);
    for (const [i, item] of value.entries()) {
      const bad = checkObjectShape(item, kind, `objects.${key}[${i}]`);
      if (bad) throw new BundleError(`${name}: ${bad}`);
    }
    pushAll(bundle.objects[key as keyof BundleObjects] as unknown[], value);
  }
  const seenNodes = new Map<string, number>();
  for (const [i, n] of ((doc.nodes ?? []) as unknown[]).entries()) {
    const node = n as Partial<NodeCapture>;
    checkNodeCapture(n, `nodes[${i}]`, name);
    // two captures of one node: which one the analysis should read cannot be told (it read the first, twice)
    const before = seenNodes.get(node.name!);
    if (before !== undefined) throw new BundleError(`${name}: nodes[${i}] is node ${JSON.stringify(node.name)} again (nodes[${before}]): one capture per node; fix the bundle, or capture again`);
    seenNodes.set(node.name!, i);
    const sections: NodeCapture["sections"] = {};
    for (const [sec, out] of Object.entries(node.sections ?? {})) {
      if (!(SECTION_NAMES as readonly string[]).includes(sec)) {
        bundle.warnings.push(`${name}: node ${node.name}: unknown section "${sec}" ignored`);
        continue;
      }
      sections[sec as SectionName] = out;
    }
    const capture: NodeCapture = { name: node.name!, sections };
    if (node.source) capture.source = node.source;
    if (node.error) capture.error = node.error;
    bundle.nodes.push(capture);
  }
  if (Array.isArray(doc.warnings)) {
    doc.warnings.forEach((w, i) => {
      if (typeof w !== "string") throw new BundleError(`${name}: warnings[${i}] is ${describeValue(w)}: want a string`);
    });
    bundle.warnings = pushAll([...(doc.warnings as string[])], bundle.warnings);
  }
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
 * @throws {BundleError} when the directory holds neither objects nor node dumps, or two files of one node's section
 *   (`nodes/k8s1/iptables-save.txt` and `iptables-save.out`), among others; the message says what to do.
 */
export function bundleFromFiles(files: BundleFile[], dirName: string): Bundle {
  const bundle = emptyBundle({});
  const nodes = new Map<string, NodeCapture>();
  const exits = new Map<string, number>();
  /** `node/section` → the file its dump came from. */
  const dumps = new Map<string, string>();
  const sorted = [...files].sort((a, b) => compareText(a.path, b.path));
  let objects = 0;
  const oneFileBundles: string[] = [];
  for (const f of sorted) {
    const parts = f.path.split("/");
    if (parts[0] === "nodes" && parts.length === 3) {
      const node = parts[1]!;
      const base = parts[2]!;
      const section = base.replace(/\.(txt|json|out|exit)$/, "");
      if (!(SECTION_NAMES as readonly string[]).includes(section)) {
        if (/\.(txt|json|out)$/.test(base)) {
          // A dump under a name no parser reads: analysing the node without it would answer from less than was given.
          throw new BundleError(`${dirName}/${f.path}: unknown section "${section}": rename it to one of ${SECTION_NAMES.join(", ")} (docs/bundle.md)`);
        }
        bundle.warnings.push(`${dirName}/${f.path}: unknown section "${section}" (want one of ${SECTION_NAMES.join(", ")}); ignored`);
        continue;
      }
      if (!base.endsWith(".exit")) {
        // two dumps of one section (iptables-save.txt and iptables-save.out): which one the node had cannot be told
        const before = dumps.get(`${node}/${section}`);
        if (before !== undefined) {
          throw new BundleError(`${dirName}: ${before} and ${f.path} are both the ${section} dump of node ${node}: keep one (remove or rename the other) (docs/bundle.md)`);
        }
        dumps.set(`${node}/${section}`, f.path);
      }
      if (base.endsWith(".exit")) {
        const code = f.text.trim();
        if (!/^\d{1,3}$/.test(code)) throw new BundleError(`${dirName}/${f.path} holds ${JSON.stringify(code.slice(0, 40))}: want the command's exit code, a number such as 0`);
        exits.set(`${node}/${section}`, Number(code));
        continue;
      }
      if (isBinary(f.text)) {
        // The node is still listed, with the error: analysing it without this dump would answer from less than was given.
        const failed = nodes.get(node) ?? { name: node, sections: {}, source: { kind: "file" as const, detail: `${dirName}/nodes/${node}` } };
        failed.error = `${dirName}/${f.path} holds binary data, not the output of ${section}`;
        nodes.set(node, failed);
        continue;
      }
      const capture = nodes.get(node) ?? { name: node, sections: {}, source: { kind: "file" as const, detail: `${dirName}/nodes/${node}` } };
      capture.sections[section as SectionName] = { stdout: f.text };
      nodes.set(node, capture);
      continue;
    }
    if (parts[0] === "nodes" && parts.length === 2 && !/^README(\.md)?$/i.test(parts[1]!)) {
      // a node's dump saved where its directory belongs: analysing without it would answer from less than was given
      throw new BundleError(`${dirName}/${f.path} is a file where a node's directory belongs: rename it to ${dirName}/nodes/${parts[1]!.replace(/\.[^.]*$/, "")}/SECTION.txt, one file per section (docs/bundle.md)`);
    }
    if (!/\.(ya?ml|json)$/.test(f.path)) {
      if (!/(^|\/)README(\.md)?$/i.test(f.path)) bundle.warnings.push(`${dirName}/${f.path}: not a .yaml/.json file; ignored`);
      continue;
    }
    // An object file that cannot be read fails the bundle: answering without its objects (endpoints, pods) would be an
    // answer from less than the bundle holds, presented as whole (a cut endpointslices.yaml made every endpoint "stale").
    if (isBinary(f.text)) {
      throw new BundleError(`${dirName}/${f.path} holds binary data, not Kubernetes objects in YAML or JSON: fix or remove it, or export the objects again`);
    }
    const docs = parseStructured(f.text, `${dirName}/${f.path}`);
    if (/(^|\/)capture\.ya?ml$/.test(f.path)) {
      bundle.capture = checkCaptureInfo(docs[0], `${dirName}/${f.path}`, `${dirName}/${f.path}: `);
      continue;
    }
    if ((docs[0] as { format?: unknown } | undefined)?.format === BUNDLE_FORMAT) {
      // A one-file bundle inside a directory: merge it (with the directory's loose objects; never with another bundle).
      oneFileBundles.push(f.path);
      if (oneFileBundles.length > 1) {
        throw new BundleError(
          `${dirName} holds several one-file bundles (${oneFileBundles.join(", ")}), which may come from different clusters: give one, e.g. --from ${dirName}/${oneFileBundles[0]}`,
        );
      }
      const inner = decodeBundle(f.text, `${dirName}/${f.path}`);
      bundle.capture = { ...inner.capture, ...bundle.capture };
      for (const key of Object.keys(inner.objects) as (keyof BundleObjects)[]) {
        pushAll(bundle.objects[key] as unknown[], inner.objects[key]);
        objects += inner.objects[key].length;
      }
      for (const n of inner.nodes) nodes.set(n.name, n);
      pushAll(bundle.warnings, inner.warnings);
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
    throw new BundleError(
      `${dirName} holds no Kubernetes objects (*.yaml, *.json) and no node dumps (nodes/<node>/<section>.txt): not a bundle directory; check the path (docs/bundle.md)`,
    );
  }
  return bundle;
}

/**
 * Encodes a bundle for `capture -o FILE`: format version {@link BUNDLE_VERSION}, `end` ({@link BUNDLE_END}) last.
 * @param bundle the bundle.
 * @param format "json" (default for `.json`) or "yaml".
 * @returns the text.
 */
export function encodeBundle(bundle: Bundle, format: "json" | "yaml"): string {
  // `end` last: its absence tells a cut file (BUNDLE_END)
  const doc = { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, capture: bundle.capture, objects: bundle.objects, nodes: bundle.nodes, warnings: bundle.warnings, end: BUNDLE_END };
  // exact and safe to print: `capture -o -` writes it to a terminal, and a name may hold an escape sequence
  return serializeExact(doc, format);
}

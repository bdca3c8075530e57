// Completion, the pure parts: reading the line being completed (against the real program's flags), the plan for it,
// the candidates built from objects, the directive, Cobra's answer format, kubeconfig contexts and lookup settings.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { registerCompletion } from "../src/cli/completion.ts";
import { buildProgram } from "../src/cli/program.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type { KubeObject } from "../src/model/k8s.ts";
import { type CompletionPlan, contextCandidates, directiveFor, objectCandidates, planCompletion, targetKindOf } from "../src/cli/completion/candidates.ts";
import { Directive, formatAnswer, parseAnswer } from "../src/cli/completion/directive.ts";
import { lineSpecOf } from "../src/cli/completion/engine.ts";
import { KubeconfigReadError, kubeconfigPaths, mergeContexts } from "../src/cli/completion/kubeconfig_contexts.ts";
import { KubeconfigShapeError } from "../src/kube/kubeconfig_merge.ts";
import { type CompletionLine, parseCompletionLine, splitGluedValues } from "../src/cli/completion/line.ts";
import { bundleObjects, DEFAULT_LOOKUP_TIMEOUT_MS, lookupTimeoutMs, resolveLinePath } from "../src/cli/completion/lookups.ts";

const IPTABLES_LAB = fileURLToPath(new URL("../examples/iptables-lab", import.meta.url));
const AZURE_ZONES = fileURLToPath(new URL("../examples/azure-zones", import.meta.url));

const io: CliIo = { stdout: () => {}, stderr: () => {}, env: {}, stdoutIsTTY: false, stderrIsTTY: false, cwd: "/" };
const program = buildProgram(io, { code: 0 });
registerCompletion(program, io, { code: 0 });
const spec = lineSpecOf(program);

describe("lineSpecOf: the program's flags as completion reads them", () => {
  it("value flags, path flags, short letters, target commands", () => {
    const byLong = Object.fromEntries(spec.flags.map((f) => [f.long, f]));
    expect(byLong.namespace).toEqual({ long: "namespace", short: "n", takesValue: true });
    expect(byLong.from).toEqual({ long: "from", takesValue: true, isPath: true });
    expect(byLong.kubeconfig).toEqual({ long: "kubeconfig", takesValue: true, isPath: true });
    expect(byLong["all-nodes"]).toEqual({ long: "all-nodes", takesValue: false });
    expect(byLong["no-color"]).toEqual({ long: "no-color", takesValue: false });
    expect(byLong.output).toEqual({ long: "output", short: "o", takesValue: true });
    expect(spec.targetCommands).toContain("");
    expect(spec.targetCommands).not.toContain("completion");
    expect(Object.keys(spec.subcommands)).toEqual(expect.arrayContaining(["completion", "complete"]));
  });
});

describe("parseCompletionLine", () => {
  const cases: { name: string; input: string[]; want: Partial<CompletionLine> }[] = [
    { name: "nothing typed", input: [], want: { current: "", positionals: [], flags: {}, completing: { kind: "positional", index: 0 } } },
    { name: "a new first word", input: [""], want: { current: "", completing: { kind: "positional", index: 0 } } },
    { name: "a target prefix", input: ["svc/"], want: { current: "svc/", positionals: [], completing: { kind: "positional", index: 0 } } },
    {
      name: "-n before the target",
      input: ["-n", "kube-system", "svc/k"],
      want: { current: "svc/k", flags: { namespace: ["kube-system"] }, completing: { kind: "positional", index: 0 } },
    },
    { name: "the value of -n", input: ["-n", ""], want: { current: "", flags: {}, completing: { kind: "flag-value", flag: "namespace" } } },
    { name: "--namespace=value", input: ["--namespace=kube"], want: { current: "kube", completing: { kind: "flag-value", flag: "namespace" } } },
    {
      name: "-nVALUE glued, then a second positional",
      input: ["-nkube-system", "svc/x", ""],
      want: { flags: { namespace: ["kube-system"] }, positionals: ["svc/x"], completing: { kind: "positional", index: 1 } },
    },
    { name: "a boolean flag takes no value", input: ["--all-nodes", ""], want: { flags: { "all-nodes": ["true"] }, completing: { kind: "positional", index: 0 } } },
    { name: "--no-color is boolean", input: ["--no-color", "svc/"], want: { flags: { "no-color": ["true"] }, completing: { kind: "positional", index: 0 } } },
    {
      name: "a repeated --node",
      input: ["--node", "k8s1", "--node", ""],
      want: { flags: { node: ["k8s1"] }, completing: { kind: "flag-value", flag: "node" } },
    },
    { name: "-o after a flag", input: ["--no-color", "-o", "j"], want: { current: "j", completing: { kind: "flag-value", flag: "output" } } },
    { name: "a subcommand", input: ["completion", ""], want: { subcommand: "completion", positionals: [], completing: { kind: "positional", index: 0 } } },
    { name: "-- ends the flags", input: ["--", "-n", ""], want: { positionals: ["-n"], completing: { kind: "positional", index: 1 } } },
    { name: "an unknown flag is taken as boolean", input: ["--bogus", "svc/"], want: { flags: { bogus: ["true"] }, completing: { kind: "positional", index: 0 } } },
    { name: "a flag name", input: ["--fr"], want: { current: "--fr", completing: { kind: "flag-name" } } },
    { name: "a lone dash", input: ["-"], want: { completing: { kind: "flag-name" } } },
    { name: "--from with its value to come", input: ["--from", ""], want: { completing: { kind: "flag-value", flag: "from" } } },
    { name: "=value of a boolean flag is not a value completion", input: ["--all-nodes=t"], want: { completing: { kind: "flag-name" } } },
    // -n=NS is -n NS, as kubectl (pflag parseSingleShortArg) and the command (program.ts shortEquals) read it
    {
      name: "-n=NS before the target",
      input: ["-n=kube-system", "svc/"],
      want: { current: "svc/", flags: { namespace: ["kube-system"] }, completing: { kind: "positional", index: 0 } },
    },
    { name: "-n=value under the cursor", input: ["-n=kube"], want: { current: "kube", completing: { kind: "flag-value", flag: "namespace" } } },
    { name: "-n= under the cursor", input: ["-n="], want: { current: "", completing: { kind: "flag-value", flag: "namespace" } } },
    { name: "-o=value under the cursor", input: ["-o=j"], want: { current: "j", completing: { kind: "flag-value", flag: "output" } } },
    { name: "capture -o=FILE", input: ["capture", "-o=b.json", "svc/"], want: { flags: { output: ["b.json"] }, completing: { kind: "positional", index: 0 } } },
    // a value with `=` in it (a context may be named `team=alpha`) is the whole word, spaced or after `--context=`
    { name: "a spaced value holding =", input: ["--context", "team=a"], want: { current: "team=a", completing: { kind: "flag-value", flag: "context" } } },
    { name: "--flag=value holding =", input: ["--context=team=a"], want: { current: "team=a", completing: { kind: "flag-value", flag: "context" } } },
  ];
  it.each(cases)("$name", ({ input, want }) => {
    expect(parseCompletionLine(input, spec)).toMatchObject(want);
  });
});

describe("splitGluedValues: the spaced form the engine reads", () => {
  it.each([
    { name: "--flag=value", input: ["--from=/b", "svc/"], want: ["--from", "/b", "svc/"] },
    { name: "-nVALUE", input: ["-nkube-system", "svc/"], want: ["-n", "kube-system", "svc/"] },
    { name: "-n=VALUE (pflag's reading)", input: ["-n=kube-system", "svc/"], want: ["-n", "kube-system", "svc/"] },
    { name: "a value that looks glued stays a value", input: ["-n", "-nx", ""], want: ["-n", "-nx", ""] },
    { name: "the word under the cursor is kept", input: ["--namespace=kube"], want: ["--namespace=kube"] },
    { name: "boolean and unknown flags are kept", input: ["--all-nodes", "--bogus=1", "-x", ""], want: ["--all-nodes", "--bogus=1", "-x", ""] },
    { name: "nothing after --", input: ["--", "--from=x", ""], want: ["--", "--from=x", ""] },
    { name: "nothing", input: [], want: [] },
  ])("$name", ({ input, want }) => {
    expect(splitGluedValues(input, spec)).toEqual(want);
  });
});

describe("planCompletion", () => {
  const cases: { name: string; input: string[]; want: CompletionPlan }[] = [
    { name: "first word: target types", input: [""], want: { kind: "target-types" } },
    { name: "first word begun", input: ["s"], want: { kind: "target-types" } },
    { name: "svc/: Service names", input: ["svc/"], want: { kind: "lookup", lookup: "services", prefix: "svc/", exclude: [] } },
    { name: "service/kube: long form kept", input: ["service/kube"], want: { kind: "lookup", lookup: "services", prefix: "service/", exclude: [] } },
    { name: "services/ (plural)", input: ["services/"], want: { kind: "lookup", lookup: "services", prefix: "services/", exclude: [] } },
    { name: "pvc/: claims", input: ["pvc/"], want: { kind: "lookup", lookup: "persistentvolumeclaims", prefix: "pvc/", exclude: [] } },
    { name: "po/: pods", input: ["po/"], want: { kind: "lookup", lookup: "pods", prefix: "po/", exclude: [] } },
    { name: "deploy/ is not a target", input: ["deploy/"], want: { kind: "engine" } },
    { name: "svc NAME (two words)", input: ["svc", ""], want: { kind: "lookup", lookup: "services", prefix: "", exclude: [] } },
    { name: "after a whole target", input: ["svc/web", ""], want: { kind: "engine" } },
    { name: "-n: namespaces", input: ["-n", ""], want: { kind: "lookup", lookup: "namespaces", prefix: "", exclude: [] } },
    { name: "--context: contexts", input: ["--context", ""], want: { kind: "lookup", lookup: "contexts", prefix: "", exclude: [] } },
    { name: "--node: nodes, minus those given", input: ["--node", "k8s1", "--node", ""], want: { kind: "lookup", lookup: "nodes", prefix: "", exclude: ["k8s1"] } },
    { name: "--from: files", input: ["--from", ""], want: { kind: "files" } },
    { name: "--from=: files", input: ["--from=exa"], want: { kind: "files" } },
    { name: "--kubeconfig: files", input: ["--kubeconfig", ""], want: { kind: "files" } },
    { name: "-o: the engine's choices", input: ["-o", ""], want: { kind: "engine" } },
    { name: "--source: a free value", input: ["--source", ""], want: { kind: "engine" } },
    { name: "completion SHELL", input: ["completion", ""], want: { kind: "engine" } },
    { name: "a flag name", input: ["--"], want: { kind: "engine" } },
  ];
  it.each(cases)("$name", ({ input, want }) => {
    expect(planCompletion(parseCompletionLine(input, spec), spec)).toEqual(want);
  });
  it("reads type words with the command's own parser", () => {
    expect([targetKindOf("svc"), targetKindOf("SERVICES"), targetKindOf("persistentvolumeclaim"), targetKindOf("po"), targetKindOf("deploy")])
      .toEqual(["service", "service", "pvc", "pod", undefined]);
  });
});

describe("candidates from objects", () => {
  const lab = readBundle(IPTABLES_LAB);
  const azure = readBundle(AZURE_ZONES);
  const lookup = (l: "services" | "persistentvolumeclaims" | "pods" | "nodes" | "namespaces", prefix = "", exclude: string[] = []) =>
    ({ kind: "lookup", lookup: l, prefix, exclude }) as const;
  it("Services of the namespace, sorted, TYPE CLUSTER-IP", () => {
    expect(objectCandidates(lookup("services", "svc/"), bundleObjects(lab, "services", "default"))).toEqual([
      { value: "svc/kubernetes", description: "ClusterIP 10.96.0.1" },
      { value: "svc/my-nginx-svc", description: "ClusterIP 10.98.69.149" },
    ]);
    expect(objectCandidates(lookup("services", "service/"), bundleObjects(lab, "services", "kube-system"))).toEqual([
      { value: "service/kube-dns", description: "ClusterIP 10.96.0.10" },
    ]);
    expect(bundleObjects(lab, "services", "nope")).toEqual([]);
  });
  it("ExternalName and headless Services", () => {
    const objs = [
      { metadata: { name: "db" }, spec: { type: "ExternalName", externalName: "db.example.com" } },
      { metadata: { name: "hl" }, spec: { clusterIP: "None" } },
    ] as KubeObject[];
    expect(objectCandidates(lookup("services"), objs).map((c) => c.description)).toEqual(["ExternalName db.example.com", "ClusterIP None"]);
  });
  it("Pending first, then by name, the phase as description", () => {
    expect(objectCandidates(lookup("pods", "pod/"), bundleObjects(azure, "pods", "default"))).toEqual([
      { value: "pod/busybox", description: "Pending" },
      { value: "pod/busybox-zoned", description: "Running" },
    ]);
    const claims = [
      { metadata: { name: "a-bound" }, status: { phase: "Bound" } },
      { metadata: { name: "z-pending" }, status: { phase: "Pending" } },
      { metadata: { name: "m-pending" }, status: { phase: "Pending" } },
      { metadata: { name: "b-nophase" } },
    ] as KubeObject[];
    expect(objectCandidates(lookup("persistentvolumeclaims", "pvc/"), claims)).toEqual([
      { value: "pvc/m-pending", description: "Pending" },
      { value: "pvc/z-pending", description: "Pending" },
      { value: "pvc/a-bound", description: "Bound" },
      { value: "pvc/b-nophase", description: "" },
    ]);
  });
  it("namespaces and nodes of a bundle; --node excludes the ones given", () => {
    expect(objectCandidates(lookup("namespaces"), bundleObjects(lab, "namespaces", "default")).map((c) => c.value)).toEqual(["default", "kube-system"]);
    // the lab holds k8s1's rules alone: --node k8s2 or k8s3 with --from would be "not analysed"
    expect(objectCandidates(lookup("nodes", "", ["k8s2"]), bundleObjects(lab, "nodes", "default"))).toEqual([
      { value: "k8s1", description: "Ready" },
    ]);
    const two = { ...lab, nodes: [...lab.nodes, { ...lab.nodes[0]!, name: "k8s3" }] };
    expect(objectCandidates(lookup("nodes", "", ["k8s1"]), bundleObjects(two, "nodes", "default"))).toEqual([
      { value: "k8s3", description: "Ready" },
    ]);
    const nodes = [
      { metadata: { name: "b" }, status: { conditions: [{ type: "Ready", status: "False" }] } },
      { metadata: { name: "a" }, spec: { unschedulable: true }, status: { conditions: [{ type: "Ready", status: "True" }] } },
      { metadata: { name: "c" } },
    ] as KubeObject[];
    expect(objectCandidates(lookup("nodes"), nodes)).toEqual([
      { value: "a", description: "Ready,SchedulingDisabled" },
      { value: "b", description: "NotReady" },
      { value: "c", description: "" },
    ]);
  });
  it("contexts in kubeconfig order, the current one marked", () => {
    expect(contextCandidates([{ name: "prod", cluster: "c1", namespace: "shop" }, { name: "lab" }], "lab")).toEqual([
      { value: "prod", description: "cluster c1, namespace shop" },
      { value: "lab", description: "(current)" },
    ]);
  });
});

describe("directiveFor", () => {
  const cases: { name: string; plan: CompletionPlan; values: string[]; failed: boolean; want: number }[] = [
    { name: "a failed lookup", plan: { kind: "lookup", lookup: "services", prefix: "svc/", exclude: [] }, values: [], failed: true, want: 1 },
    { name: "files", plan: { kind: "files" }, values: [], failed: false, want: 0 },
    { name: "target prefixes offered", plan: { kind: "target-types" }, values: ["capture", "svc/"], failed: false, want: 6 },
    { name: "only subcommands left", plan: { kind: "target-types" }, values: ["capture", "cleanup"], failed: false, want: 4 },
    { name: "Service names", plan: { kind: "lookup", lookup: "services", prefix: "svc/", exclude: [] }, values: ["svc/a"], failed: false, want: 4 },
    { name: "claims keep their order", plan: { kind: "lookup", lookup: "persistentvolumeclaims", prefix: "pvc/", exclude: [] }, values: [], failed: false, want: 36 },
    { name: "pods keep their order", plan: { kind: "lookup", lookup: "pods", prefix: "", exclude: [] }, values: [], failed: false, want: 36 },
    { name: "the engine's own", plan: { kind: "engine" }, values: ["--from"], failed: false, want: 4 },
  ];
  it.each(cases)("$name → $want", ({ plan, values, failed, want }) => {
    expect(directiveFor(plan, values, failed)).toBe(want);
  });
});

describe("Cobra's __complete format", () => {
  it("formats candidates with descriptions, then the directive", () => {
    expect(formatAnswer([{ value: "svc/", description: "a Service" }, { value: "json", description: "" }], Directive.NoSpace | Directive.NoFileComp))
      .toBe("svc/\ta Service\njson\n:6\n");
    expect(formatAnswer([], Directive.Error)).toBe(":1\n");
  });
  it("never lets a tab or newline break a line", () => {
    expect(formatAnswer([{ value: "a\tb", description: "line1\nline2" }], 4)).toBe("a b\tline1 line2\n:4\n");
  });
  it("parses what it formats", () => {
    expect(parseAnswer("svc/kube-dns\tClusterIP 10.96.0.10\nplain\n:36\n")).toEqual({
      candidates: [{ value: "svc/kube-dns", description: "ClusterIP 10.96.0.10" }, { value: "plain", description: "" }],
      directive: 36,
    });
  });
  it.each([
    { name: "no directive", input: "svc/a\n", want: 'completion answer has no directive line (":<n>"): "svc/a"' },
    { name: "empty", input: "", want: 'completion answer has no directive line (":<n>"): ""' },
    { name: "not a number", input: ":x\n", want: 'completion answer has no directive line (":<n>"): ":x"' },
  ])("refuses an answer with $name", ({ input, want }) => {
    expect(() => parseAnswer(input)).toThrow(want);
  });
});

describe("kubeconfig contexts without the client", () => {
  it.each([
    { name: "--kubeconfig alone, explicit", input: { flag: "/k", env: "/a:/b", home: "/home/u" }, want: { paths: ["/k"], explicit: true } },
    { name: "KUBECONFIG list, empty entries and repeats dropped", input: { env: "/a::/b:/a", home: "/home/u" }, want: { paths: ["/a", "/b"], explicit: false } },
    { name: "Windows separator", input: { env: "C:\\a;C:\\b", separator: ";" }, want: { paths: ["C:\\a", "C:\\b"], explicit: false } },
    { name: "~/.kube/config", input: { home: "/home/u/" }, want: { paths: ["/home/u/.kube/config"], explicit: false } },
    { name: "nothing", input: {}, want: { paths: [], explicit: false } },
  ])("paths: $name", ({ input, want }) => {
    expect(kubeconfigPaths(input)).toEqual(want);
  });
  it("first definition of a name wins, first current-context wins", () => {
    const a = "contexts:\n- name: lab\n  context: {cluster: lab-c, namespace: shop}\n";
    const b = "current-context: prod\ncontexts:\n- name: prod\n  context: {cluster: prod-c}\n- name: lab\n  context: {cluster: other}\n";
    const c = "current-context: lab\n";
    expect(mergeContexts([{ path: "/a", text: a }, { path: "/b", text: b }, { path: "/c", text: c }])).toEqual({
      contexts: [{ name: "lab", cluster: "lab-c", namespace: "shop" }, { name: "prod", cluster: "prod-c" }],
      current: "prod",
    });
    expect(mergeContexts([{ path: "/empty", text: "" }])).toEqual({ contexts: [] });
  });
  it.each([
    { name: "bad YAML", text: "contexts: [\n", err: KubeconfigReadError, want: /^\/k: not valid YAML: / },
    { name: "contexts not a list", text: "contexts: {a: 1}\n", err: KubeconfigShapeError, want: /^\/k: "contexts" must be a list$/ },
    { name: "not a mapping", text: "- a\n", err: KubeconfigShapeError, want: /^\/k: not a kubeconfig \(want a YAML mapping with clusters, users, contexts\)$/ },
    { name: "a context without a name", text: "contexts:\n- context: {cluster: c}\n", err: KubeconfigShapeError, want: /^\/k: contexts\[0\] has no name$/ },
  ])("refuses $name, naming the file", ({ text, err, want }) => {
    let thrown: unknown;
    try {
      mergeContexts([{ path: "/k", text }]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(err);
    expect((thrown as Error).message).toMatch(want);
  });
});

describe("lookup settings", () => {
  it.each([
    { input: undefined, want: DEFAULT_LOOKUP_TIMEOUT_MS },
    { input: "250ms", want: 250 },
    { input: "3s", want: 3000 },
    { input: "1.5s", want: 1500 },
    { input: "700", want: 700 },
    { input: "0s", want: DEFAULT_LOOKUP_TIMEOUT_MS },
    { input: "soon", want: DEFAULT_LOOKUP_TIMEOUT_MS },
  ])("KUBECTL_NETPATH_COMPLETION_TIMEOUT=$input → $want ms", ({ input, want }) => {
    expect(lookupTimeoutMs({ KUBECTL_NETPATH_COMPLETION_TIMEOUT: input })).toBe(want);
  });
  it("paths on the line: ~ expanded, relative to the current directory", () => {
    const e = { env: { HOME: "/home/u" }, cwd: "/work" };
    expect([resolveLinePath("~/b.json", e), resolveLinePath("b", e), resolveLinePath("/abs", e), resolveLinePath("~", e)])
      .toEqual(["/home/u/b.json", "/work/b", "/abs", "/home/u"]);
  });
});

/**
 * kube-proxy's configuration as the API shows it, and where each setting came from: the kube-system/kube-proxy
 * DaemonSet's command line (`--config FILE`, `--proxy-mode`, `--cluster-cidr`, `--masquerade-all`,
 * `--detect-local-mode`, `--pod-bridge-interface`, `--pod-interface-name-prefix`, `--nodeport-addresses`,
 * `--ipvs-scheduler`) and the
 * ConfigMap its `--config` file is mounted from (kubeadm: `kube-proxy` key `config.conf`; EKS: `kube-proxy-config` key
 * `config`). Without the DaemonSet (older bundles, or not readable), a ConfigMap holding a KubeProxyConfiguration is
 * taken as the `--config` file.
 *
 * Precedence is kube-proxy's own (cmd/kube-proxy/app/server.go `Options.Complete`, v1.29–v1.35): with `--config`, the
 * file replaces the command line entirely (only logging flags and `--hostname-override` are applied on top), so the
 * other flags are ignored and said to be; without `--config`, the flags are the configuration. Then the platform
 * defaults (cmd/kube-proxy/app/server_linux.go `platformApplyDefaults`): `mode: ""` is iptables on Linux in every
 * release so far, nftables mode with no `nodePortAddresses` uses `primary`, `detectLocalMode: ""` is ClusterCIDR.
 *
 * Runtime-neutral: no I/O (YAML is parsed with `yaml`).
 * @module
 */
import { parse as parseYaml } from "yaml";
import type { BundleObjects } from "../bundle/bundle.ts";
import type { ConfigMap, DaemonSet, DaemonSetContainer } from "../model/k8s.ts";
import type { Finding } from "./report.ts";

/** A setting's value and where it came from (`flag --proxy-mode of DaemonSet kube-system/kube-proxy`, …). */
export interface ConfigSetting<T> {
  value: T;
  source: string;
}

/** kube-proxy's settings that change what a node's rules should be, each with its source. */
export interface KubeProxySettings {
  /** `mode` as configured (`""` when unset: see {@link effectiveMode}). */
  mode: ConfigSetting<string>;
  clusterCIDRs?: ConfigSetting<string[]>;
  masqueradeAll?: ConfigSetting<boolean>;
  detectLocalMode?: ConfigSetting<string>;
  bridgeInterface?: ConfigSetting<string>;
  interfaceNamePrefix?: ConfigSetting<string>;
  /** `nodePortAddresses` / `--nodeport-addresses`: CIDRs and/or the keyword `primary`. */
  nodePortAddresses?: ConfigSetting<string[]>;
  /** `featureGates` / `--feature-gates`: gate name → on/off, as configured (kube-proxy's defaults are not filled in). */
  featureGates?: ConfigSetting<Record<string, boolean>>;
  /** `ipvs.scheduler` / `--ipvs-scheduler`, when set (IPVS mode; unset: see {@link effectiveIpvsScheduler}). */
  ipvsScheduler?: ConfigSetting<string>;
  /** Where the configuration was read (for the report's notes). */
  origin: string;
  /** True when the DaemonSet's `--config` file was not in the bundle: no setting is known, not even a default. */
  unread?: true;
  /** What the reader noticed: flags kube-proxy ignores, a `--config` file not found among the ConfigMaps. */
  notes: string[];
}

/** The raw fields of a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) this tool reads. */
interface RawConfig {
  kind?: string;
  mode?: string;
  clusterCIDR?: string;
  masqueradeAll?: boolean;
  iptables?: { masqueradeAll?: boolean };
  nftables?: { masqueradeAll?: boolean };
  detectLocalMode?: string;
  detectLocal?: { bridgeInterface?: string; interfaceNamePrefix?: string };
  nodePortAddresses?: string[] | null;
  featureGates?: Record<string, unknown> | null;
  ipvs?: { scheduler?: string } | null;
}

/** The flags read, by name, and the config field each sets. */
const FLAGS = ["proxy-mode", "cluster-cidr", "masquerade-all", "detect-local-mode", "pod-bridge-interface", "pod-interface-name-prefix", "nodeport-addresses", "feature-gates", "ipvs-scheduler"] as const;
/** Flags kube-proxy applies on top of `--config` (logging, hostname-override) or that only select the file. */
const KEPT_WITH_CONFIG = /^(config|hostname-override|v|vmodule|logging-format|log-flush-frequency|log-text-.*|log-json-.*|write-config-to|cleanup|init-only)$/;

/** The kube-proxy container of a DaemonSet: the one named kube-proxy, else the first whose command runs kube-proxy. */
function proxyContainer(ds: DaemonSet): DaemonSetContainer | undefined {
  const cs = ds.spec?.template?.spec?.containers ?? [];
  return cs.find((c) => c.name === "kube-proxy") ?? cs.find((c) => [...(c.command ?? []), ...(c.args ?? [])].some((w) => /(^|\/)kube-proxy(\s|$)/.test(w)));
}

/** The kube-proxy DaemonSet of the bundle (kube-system/kube-proxy, else a kube-system DaemonSet running kube-proxy). */
export function kubeProxyDaemonSet(objects: BundleObjects): DaemonSet | undefined {
  const inKs = (objects.daemonSets ?? []).filter((d) => (d.metadata.namespace ?? "kube-system") === "kube-system");
  return inKs.find((d) => d.metadata.name === "kube-proxy") ?? inKs.find((d) => proxyContainer(d) !== undefined);
}

/**
 * The words of a container's command line: `command` then `args`; a `sh -c "…"` script is split on white space
 * (the flags are read, never run).
 */
function argv(c: DaemonSetContainer): string[] {
  const words = [...(c.command ?? []), ...(c.args ?? [])];
  const shell = words.findIndex((w, i) => w === "-c" && i > 0 && /(^|\/)(ba|da)?sh$/.test(words[i - 1]!));
  if (shell >= 0) return words.slice(shell + 1).flatMap((w) => w.split(/\s+/)).filter((w) => w !== "");
  return words;
}

/**
 * Parses `--name=value` / `--name value` flags as pflag does (a bool flag takes no separate value).
 * @returns flag name → last value given.
 */
export function parseFlags(words: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const bools = new Set(["masquerade-all", "cleanup", "init-only"]);
  for (let i = 0; i < words.length; i++) {
    const m = /^--([A-Za-z0-9][A-Za-z0-9-]*)(?:=(.*))?$/.exec(words[i]!);
    if (!m) continue;
    const name = m[1]!;
    if (m[2] !== undefined) out.set(name, m[2]);
    else if (bools.has(name)) out.set(name, "true");
    else if (i + 1 < words.length && !words[i + 1]!.startsWith("--")) out.set(name, words[++i]!);
    else out.set(name, "");
  }
  return out;
}

function parseConfig(text: string): RawConfig | undefined {
  try {
    const v = parseYaml(text) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as RawConfig) : undefined;
  } catch {
    return undefined;
  }
}

function findConfigMap(objects: BundleObjects, name: string): ConfigMap | undefined {
  return objects.configMaps.find((c) => c.metadata.name === name && (c.metadata.namespace ?? "kube-system") === "kube-system");
}

/**
 * The ConfigMap and key a `--config` path is mounted from: the container's volumeMount whose mountPath is the file's
 * directory (key = the file name) or the file itself (key = subPath), and the DaemonSet's ConfigMap volume of that name.
 */
function configFileSource(ds: DaemonSet, c: DaemonSetContainer, path: string): { configMap: string; key: string } | undefined {
  const vols = ds.spec?.template?.spec?.volumes ?? [];
  const trim = (p: string) => p.replace(/\/+$/, "");
  for (const m of c.volumeMounts ?? []) {
    const cmName = vols.find((v) => v.name === m.name)?.configMap?.name;
    if (!cmName) continue;
    if (m.subPath && trim(m.mountPath) === path) return { configMap: cmName, key: m.subPath };
    const dir = path.slice(0, path.lastIndexOf("/"));
    if (!m.subPath && trim(m.mountPath) === dir) return { configMap: cmName, key: path.slice(path.lastIndexOf("/") + 1) };
  }
  return undefined;
}

/**
 * The ConfigMap (and key) a kube-proxy DaemonSet's `--config` file is mounted from, if it says.
 * @returns undefined when the DaemonSet runs without `--config` or the file is not mounted from a ConfigMap.
 */
export function kubeProxyConfigFile(ds: DaemonSet): { configMap: string; key: string; path: string } | undefined {
  const c = proxyContainer(ds);
  const path = c ? parseFlags(argv(c)).get("config") : undefined;
  const file = c && path ? configFileSource(ds, c, path) : undefined;
  return file && path ? { ...file, path } : undefined;
}

/** A ConfigMap of kube-system holding a KubeProxyConfiguration: kube-proxy/config.conf (kubeadm), kube-proxy-config/config (EKS), else any key whose YAML has `kind: KubeProxyConfiguration`. */
function guessConfigMap(objects: BundleObjects): { configMap: string; key: string; raw: RawConfig } | undefined {
  for (const [name, key] of [["kube-proxy", "config.conf"], ["kube-proxy-config", "config"], ["kube-proxy-config", "config.conf"]] as const) {
    const text = findConfigMap(objects, name)?.data?.[key];
    const raw = text !== undefined ? parseConfig(text) : undefined;
    if (raw) return { configMap: name, key, raw };
  }
  for (const cm of objects.configMaps.filter((c) => (c.metadata.namespace ?? "kube-system") === "kube-system")) {
    for (const [key, text] of Object.entries(cm.data ?? {})) {
      if (!/kind:\s*KubeProxyConfiguration/.test(text)) continue;
      const raw = parseConfig(text);
      if (raw) return { configMap: cm.metadata.name, key, raw };
    }
  }
  return undefined;
}

function fromFile(raw: RawConfig, source: string, origin: string, notes: string[]): KubeProxySettings {
  const mode = typeof raw.mode === "string" ? raw.mode : "";
  const s: KubeProxySettings = { mode: { value: mode, source: `${source} mode` }, origin, notes };
  if (typeof raw.clusterCIDR === "string" && raw.clusterCIDR !== "") {
    s.clusterCIDRs = { value: raw.clusterCIDR.split(",").map((x) => x.trim()).filter((x) => x !== ""), source: `${source} clusterCIDR` };
  }
  // v1alpha1 keeps masqueradeAll per backend; kube-proxy reads nftables.masqueradeAll in nftables mode, else
  // iptables.masqueradeAll (IPVS mode too): pkg/proxy/apis/config/v1alpha1 conversion.
  const masq = mode === "nftables" ? raw.nftables?.masqueradeAll : raw.iptables?.masqueradeAll ?? raw.masqueradeAll;
  if (typeof masq === "boolean") s.masqueradeAll = { value: masq, source: `${source} ${mode === "nftables" ? "nftables" : "iptables"}.masqueradeAll` };
  if (typeof raw.detectLocalMode === "string" && raw.detectLocalMode !== "") s.detectLocalMode = { value: raw.detectLocalMode, source: `${source} detectLocalMode` };
  if (raw.detectLocal?.bridgeInterface) s.bridgeInterface = { value: raw.detectLocal.bridgeInterface, source: `${source} detectLocal.bridgeInterface` };
  if (raw.detectLocal?.interfaceNamePrefix) s.interfaceNamePrefix = { value: raw.detectLocal.interfaceNamePrefix, source: `${source} detectLocal.interfaceNamePrefix` };
  if (Array.isArray(raw.nodePortAddresses) && raw.nodePortAddresses.length > 0) {
    s.nodePortAddresses = { value: raw.nodePortAddresses.map(String), source: `${source} nodePortAddresses` };
  }
  if (raw.featureGates !== null && typeof raw.featureGates === "object" && !Array.isArray(raw.featureGates)) {
    const gates: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(raw.featureGates)) if (typeof v === "boolean") gates[k] = v;
    if (Object.keys(gates).length > 0) s.featureGates = { value: gates, source: `${source} featureGates` };
  }
  if (typeof raw.ipvs?.scheduler === "string" && raw.ipvs.scheduler !== "") s.ipvsScheduler = { value: raw.ipvs.scheduler, source: `${source} ipvs.scheduler` };
  return s;
}

/**
 * `--feature-gates=A=true,B=false` as component-base's featuregate flag reads it (`key=value` pairs, comma-separated,
 * values parsed as booleans); pairs that are not `NAME=true|false` are left out.
 */
function parseFeatureGatesFlag(text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const pair of text.split(",")) {
    const m = /^\s*([A-Za-z0-9]+)\s*=\s*(true|false)\s*$/i.exec(pair);
    if (m) out[m[1]!] = m[2]!.toLowerCase() === "true";
  }
  return out;
}

function fromFlags(flags: Map<string, string>, where: string): KubeProxySettings {
  const src = (f: string) => `flag --${f} of ${where}`;
  const s: KubeProxySettings = { mode: { value: flags.get("proxy-mode") ?? "", source: flags.has("proxy-mode") ? src("proxy-mode") : `${where} (no --proxy-mode flag)` }, origin: `the command line of ${where} (no --config)`, notes: [] };
  const cidr = flags.get("cluster-cidr");
  if (cidr) s.clusterCIDRs = { value: cidr.split(",").map((x) => x.trim()).filter((x) => x !== ""), source: src("cluster-cidr") };
  const masq = flags.get("masquerade-all");
  if (masq !== undefined) s.masqueradeAll = { value: masq === "" || masq === "true", source: src("masquerade-all") };
  const dlm = flags.get("detect-local-mode");
  if (dlm) s.detectLocalMode = { value: dlm, source: src("detect-local-mode") };
  const br = flags.get("pod-bridge-interface");
  if (br) s.bridgeInterface = { value: br, source: src("pod-bridge-interface") };
  const pre = flags.get("pod-interface-name-prefix");
  if (pre) s.interfaceNamePrefix = { value: pre, source: src("pod-interface-name-prefix") };
  const npa = flags.get("nodeport-addresses");
  if (npa) s.nodePortAddresses = { value: npa.split(",").map((x) => x.trim()).filter((x) => x !== ""), source: src("nodeport-addresses") };
  const gates = flags.get("feature-gates");
  if (gates) {
    const value = parseFeatureGatesFlag(gates);
    if (Object.keys(value).length > 0) s.featureGates = { value, source: src("feature-gates") };
  }
  const sched = flags.get("ipvs-scheduler");
  if (sched) s.ipvsScheduler = { value: sched, source: src("ipvs-scheduler") };
  return s;
}

/**
 * Reads kube-proxy's configuration from the bundle's kube-proxy DaemonSet and ConfigMaps, as kube-proxy itself
 * resolves it (see the module comment).
 * @param objects the bundle's objects.
 * @returns the settings with their sources, or undefined when the bundle holds neither a kube-proxy DaemonSet nor a
 *   ConfigMap with a KubeProxyConfiguration.
 */
export function readKubeProxyConfig(objects: BundleObjects): KubeProxySettings | undefined {
  const ds = kubeProxyDaemonSet(objects);
  const c = ds ? proxyContainer(ds) : undefined;
  if (ds && c) {
    const where = `DaemonSet kube-system/${ds.metadata.name}`;
    const flags = parseFlags(argv(c));
    const path = flags.get("config");
    if (path === undefined || path === "") return fromFlags(flags, where);
    const notes: string[] = [];
    const ignored = [...flags.keys()].filter((f) => !KEPT_WITH_CONFIG.test(f) && (FLAGS as readonly string[]).includes(f));
    if (ignored.length > 0) {
      notes.push(`${where} passes ${ignored.map((f) => `--${f}`).join(", ")} with --config: kube-proxy ignores them (with --config the file replaces the command line, cmd/kube-proxy/app/server.go Options.Complete)`);
    }
    const file = configFileSource(ds, c, path);
    const text = file ? findConfigMap(objects, file.configMap)?.data?.[file.key] : undefined;
    const raw = text !== undefined ? parseConfig(text) : undefined;
    if (file && raw) {
      return fromFile(raw, `ConfigMap kube-system/${file.configMap} key ${file.key}`, `ConfigMap kube-system/${file.configMap} key ${file.key} (--config ${path} of ${where})`, notes);
    }
    const guess = guessConfigMap(objects);
    notes.push(
      file
        ? `${where} reads --config ${path} from ConfigMap kube-system/${file.configMap} key ${file.key}, which is ${text === undefined ? "not in the bundle" : "not a readable KubeProxyConfiguration"}${guess ? `; ConfigMap kube-system/${guess.configMap} key ${guess.key} is read instead` : ""}`
        : `${where} reads --config ${path}, which is not mounted from a ConfigMap${guess ? `; ConfigMap kube-system/${guess.configMap} key ${guess.key} is assumed to be that file` : ""}`,
    );
    if (guess) return fromFile(guess.raw, `ConfigMap kube-system/${guess.configMap} key ${guess.key}`, `ConfigMap kube-system/${guess.configMap} key ${guess.key} (assumed to be --config ${path} of ${where})`, notes);
    return { mode: { value: "", source: `${where} (--config ${path} not readable)` }, origin: `${where}: --config ${path} (not in the bundle)`, notes, unread: true };
  }
  const guess = guessConfigMap(objects);
  if (!guess) return undefined;
  const src = `ConfigMap kube-system/${guess.configMap} key ${guess.key}`;
  return fromFile(guess.raw, src, `${src} (the kube-proxy DaemonSet is not in the bundle: taken as its --config file)`, []);
}

/**
 * The proxy mode kube-proxy runs with these settings on Linux: the configured one, or for `""` the default —
 * iptables in every kube-proxy release so far (v1.29–v1.35 checked: cmd/kube-proxy/app/server_linux.go
 * `platformApplyDefaults`, `if config.Mode == "" { config.Mode = ProxyModeIPTables }`; older releases the same).
 */
export function effectiveMode(s: KubeProxySettings): ConfigSetting<string> & { defaulted: boolean } {
  if (s.mode.value !== "") return { ...s.mode, defaulted: false };
  return { value: "iptables", source: `${s.mode.source} unset: iptables, kube-proxy's default on Linux (cmd/kube-proxy/app/server_linux.go platformApplyDefaults, every release through v1.35)`, defaulted: true };
}

/**
 * The IPVS scheduler kube-proxy gives every virtual server it programs: the configured `ipvs.scheduler` /
 * `--ipvs-scheduler`, or, unset, `rr` (pkg/proxy/ipvs/proxier.go NewProxier: `if len(scheduler) == 0 { scheduler =
 * defaultScheduler }`, defaultScheduler "rr"; the same since IPVS mode's first release).
 * @returns undefined when the configuration is not known (`s` undefined, or its `--config` file not in the bundle).
 */
export function effectiveIpvsScheduler(s: KubeProxySettings | undefined): ConfigSetting<string> | undefined {
  if (!s || s.unread) return undefined;
  return s.ipvsScheduler ?? { value: "rr", source: `${s.origin} sets no ipvs.scheduler: rr, kube-proxy's default (pkg/proxy/ipvs/proxier.go NewProxier, defaultScheduler)` };
}

/**
 * The NodePort addresses kube-proxy uses: the configured CIDRs / `primary`, or, unset, every local address (iptables
 * and IPVS modes) or `primary` (nftables mode: server_linux.go platformApplyDefaults).
 * @returns undefined when NodePorts answer on every local address.
 */
export function effectiveNodePortAddresses(s: KubeProxySettings | undefined, mode: string): ConfigSetting<string[]> | undefined {
  if (s?.nodePortAddresses) return s.nodePortAddresses;
  if (mode === "nftables") {
    return {
      value: ["primary"],
      source: `nftables mode's default when nodePortAddresses is unset, cmd/kube-proxy/app/server_linux.go platformApplyDefaults${s ? "" : "; kube-proxy's configuration is not in the bundle"}`,
    };
  }
  return undefined;
}

/**
 * The report's findings about the configuration: one info naming where it was read and each setting with its source,
 * and a warning per note (flags kube-proxy ignores, a `--config` file not found).
 */
export function kubeProxyConfigFindings(s: KubeProxySettings): Finding[] {
  const m = effectiveMode(s);
  const parts = [`mode ${m.value} (${m.source})`];
  if (s.clusterCIDRs) parts.push(`clusterCIDR ${s.clusterCIDRs.value.join(",")} (${s.clusterCIDRs.source})`);
  if (s.masqueradeAll) parts.push(`masqueradeAll ${s.masqueradeAll.value} (${s.masqueradeAll.source})`);
  if (s.detectLocalMode) parts.push(`detectLocalMode ${s.detectLocalMode.value} (${s.detectLocalMode.source})`);
  if (s.bridgeInterface) parts.push(`bridgeInterface ${s.bridgeInterface.value} (${s.bridgeInterface.source})`);
  if (s.interfaceNamePrefix) parts.push(`interfaceNamePrefix ${s.interfaceNamePrefix.value} (${s.interfaceNamePrefix.source})`);
  if (s.nodePortAddresses) parts.push(`nodePortAddresses ${s.nodePortAddresses.value.join(",")} (${s.nodePortAddresses.source})`);
  if (s.ipvsScheduler) parts.push(`ipvs.scheduler ${s.ipvsScheduler.value} (${s.ipvsScheduler.source})`);
  if (s.featureGates) parts.push(`featureGates ${Object.entries(s.featureGates.value).map(([k, v]) => `${k}=${v}`).join(",")} (${s.featureGates.source})`);
  return [
    { severity: "info", code: "KubeProxyConfiguration", message: `kube-proxy's configuration from ${s.origin}: ${parts.join("; ")}` },
    ...s.notes.map((n): Finding => ({ severity: "warning", code: "KubeProxyConfiguration", message: n })),
  ];
}

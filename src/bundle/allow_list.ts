/**
 * What a bundle keeps of the Kubernetes objects it holds: an allow-list per kind of exactly the fields the analyses
 * (src/service, src/pending, their reports) and `--from` (src/bundle/shape.ts) read; every other field is dropped.
 * A bundle is made to be handed around, so nothing it does not need may travel with it: no container env, no image,
 * no probes, no managedFields, no annotation but the five the pending analysis reads, no ConfigMap key but
 * kube-proxy's configuration file, no CSI `volumeAttributes`, no StorageClass parameter but the ones the pending
 * report reads or shows (secret names and provisioner credentials never).
 *
 * Strings that remain and are free text (Event messages, condition messages, kube-proxy's command line, its
 * configuration file) go through {@link redactText}: token-, password-, secret- and key-looking values, bearer
 * tokens, JWTs, PEM blocks and base64 PEM data become {@link REDACTED}.
 *
 * docs/bundle.md lists what is kept; keep the two in step. Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "./bundle.ts";

/** The constant that replaces a redacted value. */
export const REDACTED = "<redacted by kubectl-netpath>";

/** The annotations an analysis reads (src/pending/context.ts, claim.ts, explain.ts; src/service/topology.ts); every other one is dropped. */
export const KEPT_ANNOTATIONS: readonly string[] = [
  "volume.kubernetes.io/selected-node",
  "pv.kubernetes.io/bind-completed",
  "volume.beta.kubernetes.io/storage-class",
  "storageclass.kubernetes.io/is-default-class",
  "storageclass.beta.kubernetes.io/is-default-class",
  // Services: whether kube-proxy follows topology hints before v1.31 (src/service/topology.ts)
  "service.kubernetes.io/topology-mode",
  "service.kubernetes.io/topology-aware-hints",
  // Services: a Cilium ClusterMesh global Service balances to other clusters' endpoints too (src/service/cilium_compare.ts)
  "service.cilium.io/global",
  "io.cilium/global-service",
  // Services: the only frontend type Cilium programs for the Service (pkg/k8s/service.go NewSvcExposureType, CanExpose;
  // src/service/cilium_compare.ts)
  "service.cilium.io/type",
];

/**
 * StorageClass parameters kept: `zoned` (src/pending/causes.ts: an unzoned Azure disk) and the documented,
 * non-secret parameters that say what kind of disk is provisioned, which the pending report prints next to the class
 * (Azure disk: skuName, storageaccounttype, kind, cachingmode; AWS EBS: type, iopsPerGB, iops, throughput, encrypted;
 * GCE PD: type, replication-type; any: fsType, csi.storage.k8s.io/fstype). Every other parameter (e.g.
 * `csi.storage.k8s.io/provisioner-secret-name`, credentials of in-tree provisioners) is dropped.
 */
export const KEPT_STORAGE_CLASS_PARAMETERS: readonly string[] = [
  "zoned",
  "skuName",
  "skuname",
  "storageaccounttype",
  "kind",
  "cachingmode",
  "type",
  "iopsPerGB",
  "iops",
  "throughput",
  "encrypted",
  "replication-type",
  "fsType",
  "csi.storage.k8s.io/fstype",
];

/** ConfigMap keys that hold a KubeProxyConfiguration under kubeadm (`config.conf`) and EKS (`config`). */
export const PROXY_CONFIG_KEYS: readonly string[] = ["config.conf", "config"];

/**
 * A field name that says its value is a credential: token, password, secret, credential(s), api key, private key,
 * client key, auth key, certificate/key data, and `auth` as a whole name (a Docker config's
 * `"auths": {"registry": {"auth": "<base64 of user:password>"}}`, `--auth VALUE`, `basic_auth=…`).
 */
const SECRET_NAME = String
  .raw`(?:[A-Za-z0-9_.-]*(?:token|passw(?:or)?d|passphrase|pwd|secret|credential|signature|authorization|api[-_]?key|access[-_]?key|auth[-_]?key|private[-_]?key|client[-_]?key|(?:certificate|cert|key)[-_]?data)[A-Za-z0-9_.-]*|(?<![A-Za-z0-9])(?:[A-Za-z0-9_.-]*[_.-])?(?:pass|auth)(?![A-Za-z0-9]))`;
/**
 * `name = value` / `name: value` under a secret-named key. The value: a quoted string (escaped quotes inside it
 * included), else, after `:` (YAML, a header, a log line), the rest of the line up to `,` `;` or a bracket (a value
 * may hold spaces: `password: hunter 2`; it stops before a redaction already made), else (after `=`) one word, `&`
 * included (over-redacting a query's next parameter rather than leaving the tail of a password holding `&`).
 */
const SECRET_ASSIGNMENT = new RegExp(
  String.raw`(["']?${SECRET_NAME}["']?[ \t]*(?::[ \t]*(?=[^\s])|=[ \t]*))("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|(?<=:[ \t]*)[^\n,;"'{}\[\]<]*[^\s,;"'{}\[\]<]|[^\s,;"'{}\[\]]+)`,
  "gi",
);
const SECRET_FLAG = new RegExp(String.raw`^--?${SECRET_NAME}$`, "i");
/** `--token VALUE` inside one string (a `sh -c` command line): the value, when it is not another flag. */
const SECRET_FLAG_INLINE = new RegExp(String.raw`((?:^|\s)--?${SECRET_NAME}[ \t]+)(?!-)("[^"\n]*"|'[^'\n]*'|[^\s]+)`, "gi");
/** A YAML block scalar under a secret-named key (`token: |` and its indented lines). */
const SECRET_BLOCK = new RegExp(String.raw`^([ \t]*)(["']?${SECRET_NAME}["']?)[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*$`, "i");
const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g;
/** base64 of "-----BEGIN" (certificate-authority-data, client-key-data, tls.crt in a manifest …). */
const PEM_BASE64 = /LS0tLS1CRUdJT[A-Za-z0-9+/=]*/g;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
/** `scheme://user:password@host` (the user may be empty, the password may hold `@`): the password. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/]+@/gi;
/** A query's `sig=` (Azure SAS signatures). */
const SIG_PARAM = /([?&]sig=)(?!<redacted)[^&\s]+/gi;

/**
 * Replaces what looks like a credential in free text with {@link REDACTED}: PEM blocks and their base64 form,
 * `Bearer`/`Basic` credentials, JWTs, the password of `scheme://user:password@host`, a query's `sig=`, and the value
 * of `NAME=VALUE` / `NAME: VALUE` where NAME says token, password, passphrase, secret, credential, signature,
 * api/access key, private/client key, or certificate/key data (`--password=x`, `token: abc`, `"client-key-data": "…"`),
 * the value after such a flag inside one string (`sh -c "kube-proxy --token abc"`), a YAML block scalar under
 * such a key (`token: |` and the lines below it), and the short options that carry a password in each command of the
 * text ({@link redactShortOptions}: `curl -u user:password`, `mysql -u root -pPASSWORD`).
 * @param text any string from the cluster.
 * @returns the text with those values replaced (unchanged when none is found).
 */
export function redactText(text: string): string {
  if (text === "") return text;
  return redactBlocks(text)
    .replace(PEM, REDACTED)
    .replace(PEM_BASE64, REDACTED)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`)
    .replace(SIG_PARAM, (_m, head: string) => `${head}${REDACTED}`)
    .replace(
      SECRET_ASSIGNMENT,
      // a value already redacted, or one that only precedes a redaction (`Authorization: Bearer <redacted>`), is left
      (m: string, name: string, value: string, at: number, all: string) =>
        value.includes("<redacted") || all.slice(at + m.length).trimStart().startsWith("<redacted") ? m : `${name}${REDACTED}`,
    )
    .replace(SECRET_FLAG_INLINE, (m, flag: string, value: string) => (value === REDACTED || value.startsWith("<redacted") ? m : `${flag}${REDACTED}`))
    .replace(COMMAND_SEGMENT, redactSegment);
}

/**
 * Commands whose `-p` takes a password: MySQL's and MariaDB's clients (`-pPASSWORD`, glued: MySQL 8.4 Reference
 * Manual, 6.2.2.2 "Using Options on the Command Line", `--password[=password], -p[password]`), sshpass (`-p password`)
 * and MongoDB's shell and tools (`-p, --password`). Not psql, pg_dump or redis-cli, whose `-p` is the port, nor curl,
 * whose `-p` is `--proxytunnel`.
 */
const PASSWORD_P_COMMAND = /^(?:mysql|mysqladmin|mysqldump|mysqlpump|mysqlimport|mysqlcheck|mysqlshow|mysqlslap|mysqlsh|mariadb|mariadb-[a-z]+|sshpass|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles)$/;
/** Words after which a command name is the command run (`exec mysql`, `sudo mysql`, `env A=1 mysql`). */
const COMMAND_PREFIX = /^(?:exec|sudo|env|nohup|command|time|nice|ionice|doas|xargs|[A-Za-z_][A-Za-z0-9_]*=.*|.*:)$/;

/**
 * Whether word i is a command of {@link PASSWORD_P_COMMAND} where a command is run: its bare name or absolute path,
 * first of the words, first in quotes, or after {@link COMMAND_PREFIX} (or a message's `failed:`). An iptables comment
 * `"default/mysql"` is a Service's name, not a command: its `-p tcp` is left alone.
 */
function isCommandAt(words: readonly string[], i: number, quoted: boolean): boolean {
  const m = /^(?:\/[^\s]*\/)?([^/\s]+)$/.exec(words[i]!);
  if (!m || !PASSWORD_P_COMMAND.test(m[1]!)) return false;
  return i === 0 || quoted || COMMAND_PREFIX.test(words[i - 1]!);
}

/** A user flag, before a glued `-pSECRET` (`mysql -u root -pSECRET`, `mysql --user=root -pSECRET`). */
const USER_FLAG = /^(?:-u.*|--user(?:name)?(?:=.*)?)$/;
/** Where one shell command ends inside a string: `;`, `&`, `|`, a newline, a backquote, `$(`, `(`, `)`. */
const COMMAND_SEGMENT = /[^;&|\n`()]+/g;

/**
 * A word of a command inside free text: up to the next space, or, when a quoted string is glued to it, through that
 * string (`-p'hunter 2'`, `--user="a b:c"`). A quote that opens a word does not join it to the next ones: in
 * `sh -c 'sshpass -p pw ssh x'` the words inside the quotes are the command looked at.
 */
const SHELL_WORD = /[^\s"']+(?:"[^"]*"|'[^']*')[^\s"']*|\S+/g;

/**
 * The credentials given as short options in one command's words: the password of `-u user:password` /
 * `-uuser:password` / `--user user:password` / `--user=user:password` (curl's `-u, --user <user:password>`), and the
 * password of `-pPASSWORD` (glued) or `-p PASSWORD` in a command of {@link PASSWORD_P_COMMAND}, and of a glued
 * `-pPASSWORD` after a user flag ({@link USER_FLAG}) in any command. `-p` elsewhere (iptables' `-p tcp`, a port) is
 * left alone.
 * @param words one command's words, quotes removed.
 * @param quoted which words opened with a quote (the start of a quoted command string).
 * @returns the words, those values replaced by {@link REDACTED}.
 */
function redactShortOptions(words: readonly string[], quoted?: readonly boolean[]): string[] {
  let pCommand = false;
  let userSeen = false;
  return words.map((w, i) => {
    const prev = i > 0 ? words[i - 1]! : "";
    if (isCommandAt(words, i, quoted?.[i] ?? false)) pCommand = true;
    let out = w;
    // curl: the user and the password, split on the first colon
    const glued = /^(-u|--user=)(.+)$/.exec(w);
    const [head, userValue] = glued ? [glued[1]!, glued[2]!] : prev === "-u" || prev === "--user" ? ["", w] : ["", undefined];
    const colon = userValue?.indexOf(":") ?? -1;
    if (userValue !== undefined && colon !== -1 && colon + 1 < userValue.length && !userValue.slice(colon + 1).startsWith("<redacted")) {
      out = `${head}${userValue.slice(0, colon + 1)}${REDACTED}`;
    }
    if (/^-p./.test(w) && !w.startsWith("-p<redacted") && (pCommand || userSeen)) out = `-p${REDACTED}`;
    else if (prev === "-p" && pCommand && !w.startsWith("-") && !w.startsWith("<redacted")) out = REDACTED;
    if (USER_FLAG.test(w)) userSeen = true;
    return out;
  });
}

/** {@link redactShortOptions} on the words of one command inside a string, the rest of the string unchanged. */
function redactSegment(segment: string): string {
  if (!/(?:^|\s)["']*-[pu]|--user/.test(segment)) return segment;
  const tokens = [...segment.matchAll(SHELL_WORD)];
  const words = tokens.map((t) => t[0].replace(/["']/g, ""));
  const redacted = redactShortOptions(words, tokens.map((t) => /^["']/.test(t[0])));
  let out = "";
  let at = 0;
  tokens.forEach((t, i) => {
    // a redacted word is written without its quotes: the redaction holds none, and a quote left alone would be unpaired
    out += segment.slice(at, t.index) + (redacted[i] === words[i] ? t[0] : redacted[i]);
    at = t.index! + t[0].length;
  });
  return out + segment.slice(at);
}

/**
 * YAML block scalars under a secret-named key (`token: |` or `password: >-` and the lines indented below it, in a
 * ConfigMap's embedded file): the whole value becomes one {@link REDACTED}.
 */
function redactBlocks(text: string): string {
  if (!/:[ \t]*[|>]/.test(text)) return text;
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = SECRET_BLOCK.exec(lines[i]!);
    out.push(m ? `${m[1]}${m[2]}: ${REDACTED}` : lines[i]!);
    if (!m) continue;
    const indent = m[1]!.length;
    while (i + 1 < lines.length && (lines[i + 1]!.trim() === "" || /^[ \t]*/.exec(lines[i + 1]!)![0].length > indent)) i++;
  }
  return out.join("\n");
}

/**
 * A command line with credentials redacted: each word as {@link redactText}, the word after a bare secret-named
 * flag (`--password hunter2`, `--token abc`), and the short options that carry a password ({@link redactShortOptions}:
 * `-u user:password`, `mysql -pPASSWORD`, `sshpass -p PASSWORD`).
 * @param argv the words.
 * @returns a new list.
 */
export function redactArgv(argv: readonly string[]): string[] {
  const short = redactShortOptions(argv);
  return argv.map((w, i) => (i > 0 && SECRET_FLAG.test(argv[i - 1]!) ? REDACTED : short[i] !== w ? short[i]! : redactText(w)));
}

/**
 * A field's rule: `true` keeps the value as it is (scalars, string maps of names and labels), `"text"` keeps a
 * string through {@link redactText}, a map keeps the listed fields of an object, `[rule]` keeps a list element by
 * element, a function computes what is kept (`undefined`: dropped).
 */
type Rule = true | "text" | { [field: string]: Rule } | [Rule] | ((v: unknown) => unknown);

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function apply(v: unknown, rule: Rule): unknown {
  if (v === undefined) return undefined;
  if (typeof rule === "function") return rule(v);
  if (rule === true) return v === null || typeof v !== "object" ? v : structuredClone(v);
  if (rule === "text") {
    return typeof v === "string" ? redactText(v) : v === null || typeof v !== "object" ? v : undefined;
  }
  if (Array.isArray(rule)) {
    return Array.isArray(v) ? v.map((x) => apply(x, rule[0])).filter((x) => x !== undefined) : undefined;
  }
  if (!isMap(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [field, x] of Object.entries(v)) { // the object's own field order: reports that copy a field keep it
    if (!Object.prototype.hasOwnProperty.call(rule, field)) continue;
    const kept = apply(x, rule[field]!);
    if (kept !== undefined) out[field] = kept;
  }
  return out;
}

function pickKeys(keys: readonly string[]): (v: unknown) => unknown {
  return (v) => {
    if (!isMap(v)) return undefined;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (keys.includes(k)) out[k] = typeof x === "string" ? redactText(x) : x;
    return Object.keys(out).length > 0 ? out : undefined;
  };
}

const argv = (
  v: unknown,
): unknown => (Array.isArray(v) ? redactArgv(v.filter((w): w is string => typeof w === "string")) : undefined);

const META: Rule = {
  name: true,
  namespace: true,
  uid: true,
  labels: true,
  annotations: pickKeys(KEPT_ANNOTATIONS),
  creationTimestamp: true,
  deletionTimestamp: true,
};
const CONDITIONS: Rule = [{ type: true, status: true, reason: "text", message: "text", lastTransitionTime: true }];
const REF: Rule = { kind: true, name: true, namespace: true, uid: true };

/** The rule of each kind, by the bundle list that holds it. */
const KINDS: Record<keyof BundleObjects, Rule> = {
  // src/service/resolve.ts, explain.ts, proxy_scope.ts, endpoint_diagnosis.ts, cluster_cidr.ts
  services: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      type: true,
      clusterIP: true,
      clusterIPs: true,
      ports: [{ name: true, protocol: true, port: true, targetPort: true, nodePort: true, appProtocol: true }],
      selector: true,
      externalIPs: true,
      externalName: true,
      externalTrafficPolicy: true,
      internalTrafficPolicy: true,
      healthCheckNodePort: true,
      sessionAffinity: true,
      sessionAffinityConfig: { clientIP: { timeoutSeconds: true } },
      loadBalancerIP: true,
      loadBalancerSourceRanges: true,
      ipFamilies: true,
      ipFamilyPolicy: true,
      publishNotReadyAddresses: true,
      trafficDistribution: true,
    },
    status: { loadBalancer: { ingress: [{ ip: true, hostname: true, ipMode: true }] } },
  },
  // src/service/resolve.ts (endpoints, zones, hints), endpoint_diagnosis.ts (managed-by label)
  endpointSlices: {
    apiVersion: true,
    kind: true,
    metadata: META,
    addressType: true,
    endpoints: [{
      addresses: true,
      conditions: { ready: true, serving: true, terminating: true },
      hostname: true,
      nodeName: true,
      zone: true,
      targetRef: REF,
      hints: { forZones: [{ name: true }], forNodes: [{ name: true }] },
    }],
    ports: [{ name: true, protocol: true, port: true, appProtocol: true }],
  },
  // src/service (endpoints' nodes, --from-pod, clients, endpoint_diagnosis: labels, Ready, container ports);
  // src/pending (placement: nodeName, nodeSelector, nodeAffinity, tolerations, schedulerName, claims, conditions)
  pods: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      nodeName: true,
      hostNetwork: true,
      nodeSelector: true,
      // InterPodAffinity: the required terms only (src/pending/filters/pod_affinity.ts)
      affinity: {
        nodeAffinity: true,
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: true },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: true },
      },
      // PodTopologySpread (src/pending/filters/topology_spread.ts)
      topologySpreadConstraints: true,
      tolerations: [{ key: true, operator: true, value: true, effect: true, tolerationSeconds: true }],
      // `ephemeral`: only its presence is read (the claim is named <pod>-<volume>).
      volumes: [{
        name: true,
        persistentVolumeClaim: { claimName: true, readOnly: true },
        ephemeral: (v) => (isMap(v) ? {} : undefined),
        // VolumeRestrictions' disk conflicts (src/pending/filters/volume_restrictions.ts): the inline disks' identity
        gcePersistentDisk: { pdName: true, readOnly: true },
        awsElasticBlockStore: { volumeID: true },
        // NodeVolumeLimits counts these inline disks under their CSI driver (src/pending/filters/volume_limits.ts)
        azureDisk: { diskName: true },
        cinder: { volumeID: true },
        portworxVolume: { volumeID: true },
        rbd: { monitors: true, pool: true, image: true, readOnly: true },
        iscsi: { iqn: true, readOnly: true },
      }],
      // NodeResourcesFit (requests, limits that default them, sidecar init containers, overhead, pod-level resources)
      // and NodePorts (hostPort) read these
      containers: [{ name: true, ports: [{ name: true, containerPort: true, protocol: true, hostPort: true, hostIP: true }], resources: { requests: true, limits: true } }],
      initContainers: [{ name: true, restartPolicy: true, resources: { requests: true, limits: true } }],
      overhead: true,
      resources: { requests: true, limits: true },
      // the scheduler counts a pod nominated to a node (after preemption) there, for pods of no higher priority
      priority: true,
      schedulerName: true,
      schedulingGates: [{ name: true }],
      // DRA (src/pending/filters/dra.ts)
      resourceClaims: [{ name: true, resourceClaimName: true, resourceClaimTemplateName: true }],
      // GangScheduling (src/pending/gang.ts): the Workload, pod group and replica the pod belongs to (v1.35)
      workloadRef: { name: true, podGroup: true, podGroupReplicaKey: true },
      // v1.36+: the PodGroup the pod belongs to (src/pending/pod_group.ts)
      schedulingGroup: { podGroupName: true },
    },
    status: {
      phase: true,
      podIP: true,
      podIPs: [{ ip: true }],
      hostIP: true,
      conditions: CONDITIONS,
      resourceClaimStatuses: [{ name: true, resourceClaimName: true }],
      // NodeResourcesFit with in-place resize: what each container was given
      containerStatuses: [{ name: true, resources: { requests: true }, allocatedResources: true }],
      initContainerStatuses: [{ name: true, resources: { requests: true }, allocatedResources: true }],
      nominatedNodeName: true,
    },
  },
  // src/service (addresses, podCIDR, nodeInfo versions for ipMode); src/pending (labels, taints, cordon, Ready)
  nodes: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: { podCIDR: true, podCIDRs: true, taints: [{ key: true, value: true, effect: true }], unschedulable: true },
    status: {
      addresses: [{ type: true, address: true }],
      conditions: CONDITIONS,
      nodeInfo: { kubeProxyVersion: true, kubeletVersion: true },
      // NodeResourcesFit
      allocatable: true,
      // src/pending: which nodes declare the features a NodeDeclaredFeatures rejection names
      declaredFeatures: true,
    },
  },
  // src/pending/filters/pod_affinity.ts: the labels a namespaceSelector reads
  namespaces: { apiVersion: true, kind: true, metadata: { name: true, uid: true, labels: true } },
  // src/pending/filters/dra.ts: the device requests' classes, the allocation's node selector and devices, reservations
  resourceClaims: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      devices: {
        requests: [{ name: true, deviceClassName: true, exactly: { deviceClassName: true }, firstAvailable: [{ name: true, deviceClassName: true }] }],
      },
    },
    status: {
      allocation: { nodeSelector: true, devices: { results: [{ request: true, driver: true, pool: true, device: true }] } },
      reservedFor: [{ resource: true, name: true, uid: true }],
    },
  },
  // src/pending/filters/volume_limits.ts: drivers' attach limits, and which in-tree plugins are migrated to CSI
  csiNodes: {
    apiVersion: true,
    kind: true,
    metadata: { name: true, uid: true, annotations: pickKeys(["storage.alpha.kubernetes.io/migrated-plugins"]) },
    spec: { drivers: [{ name: true, allocatable: { count: true }, topologyKeys: true }] },
  },
  // src/pending/volume_checks.ts (VolumeBinding capacity): which drivers opt into storage capacity, and the capacities
  csiDrivers: { apiVersion: true, kind: true, metadata: { name: true, uid: true }, spec: { storageCapacity: true, attachRequired: true } },
  csiStorageCapacities: {
    apiVersion: true,
    kind: true,
    metadata: { name: true, namespace: true, uid: true },
    storageClassName: true,
    nodeTopology: true,
    capacity: true,
    maximumVolumeSize: true,
  },
  // src/pending/claim.ts: that a claim's VolumeAttributesClass exists (its parameters may carry anything: dropped)
  volumeAttributesClasses: { apiVersion: true, kind: true, metadata: { name: true, uid: true }, driverName: true },
  // src/pending/gang.ts: the pod groups' names and policies GangScheduling reads (PreEnqueue, Permit)
  workloads: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: { controllerRef: { apiGroup: true, kind: true, name: true }, podGroups: [{ name: true, policy: { basic: (v) => (isMap(v) ? {} : undefined), gang: { minCount: true } } }] },
  },
  // src/pending/pod_group.ts: the group's policy GangScheduling reads (PreEnqueue, the pod group cycle) and the
  // scheduler's condition on it; resource claims, priority and topology constraints are dropped
  podGroups: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      podGroupTemplateRef: { workload: { workloadName: true, podGroupTemplateName: true } },
      schedulingPolicy: { basic: (v) => (isMap(v) ? {} : undefined), gang: { minCount: true } },
      parentCompositePodGroupName: true,
    },
    status: { conditions: [{ type: true, status: true, reason: true, message: true, lastTransitionTime: true }] },
  },
  // src/service/proxy_config.ts: the KubeProxyConfiguration only (see proxyConfigData)
  configMaps: { apiVersion: true, kind: true, metadata: META, data: (v) => v },
  // src/service/proxy_config.ts: where kube-proxy's configuration comes from
  daemonSets: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      template: {
        spec: {
          containers: [{
            name: true,
            command: argv,
            args: argv,
            volumeMounts: [{ name: true, mountPath: true, subPath: true }],
          }],
          volumes: [{ name: true, configMap: { name: true } }],
        },
      },
    },
  },
  // src/pending/claim.ts (static binding, provisioning), context.ts (class name)
  persistentVolumeClaims: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      storageClassName: true,
      volumeName: true,
      accessModes: true,
      volumeMode: true,
      resources: { requests: { storage: true } },
      selector: true,
      volumeAttributesClassName: true,
    },
    status: { phase: true, capacity: { storage: true }, accessModes: true },
  },
  // src/pending/claim.ts: binding fields, node affinity, and the volume source's name (csi: its driver only)
  persistentVolumes: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: (v) => (isMap(v) ? persistentVolumeSpec(v) : undefined),
    status: { phase: true },
  },
  // src/pending/context.ts storageClassSummary, causes.ts (parameters.zoned, allowedTopologies)
  storageClasses: {
    apiVersion: true,
    kind: true,
    metadata: META,
    provisioner: true,
    parameters: pickKeys(KEPT_STORAGE_CLASS_PARAMETERS),
    volumeBindingMode: true,
    allowedTopologies: true,
    reclaimPolicy: true,
  },
  // src/pending/context.ts eventSummary, src/service/endpoint_diagnosis.ts (readiness probe Events)
  events: {
    apiVersion: true,
    kind: true,
    metadata: META,
    type: true,
    reason: true,
    message: "text",
    note: "text",
    involvedObject: REF,
    regarding: REF,
    count: true,
    series: { count: true },
    firstTimestamp: true,
    lastTimestamp: true,
    eventTime: true,
    source: { component: true },
    reportingController: true,
  },
};

const PV_SPEC: Record<string, Rule> = {
  capacity: { storage: true },
  accessModes: true,
  volumeMode: true,
  storageClassName: true,
  claimRef: REF,
  nodeAffinity: true,
  persistentVolumeReclaimPolicy: true,
  volumeAttributesClassName: true,
};

/** A PV's spec: the binding fields, and the volume source by name only (`csi` keeps its `driver`). */
function persistentVolumeSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const out = apply(spec, PV_SPEC) as Record<string, unknown>;
  for (const [k, v] of Object.entries(spec)) {
    if (k in PV_SPEC || k === "mountOptions" || !isMap(v)) continue;
    out[k] = k === "csi" && typeof v.driver === "string" ? { driver: v.driver } : {};
  }
  return out;
}

/**
 * The keys of a ConfigMap that hold kube-proxy's configuration: those the kube-proxy DaemonSet mounts as its
 * `--config` file (`configKeys`), `config.conf`/`config` (kubeadm, EKS), and any key whose text is a
 * KubeProxyConfiguration (src/service/proxy_config.ts reads exactly these). A `kubeconfig.conf` is never one.
 */
function proxyConfigData(data: unknown, configKeys: ReadonlySet<string>): Record<string, string> | undefined {
  if (!isMap(data)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== "string") continue;
    const isConfig = /kind:\s*KubeProxyConfiguration/.test(v) ||
      (PROXY_CONFIG_KEYS.includes(k) && /^mode:/m.test(v) && !/^kind:\s*Config\s*$/m.test(v));
    if (configKeys.has(k) || isConfig) out[k] = redactText(v);
  }
  return out;
}

/** `CONFIGMAP/KEY` of every `--config` file the bundle's DaemonSets mount (same rule as proxy_config.ts). */
function configFileKeys(objects: BundleObjects): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const ds of objects.daemonSets ?? []) {
    const spec = ds.spec?.template?.spec;
    for (const c of spec?.containers ?? []) {
      const words = [...(c.command ?? []), ...(c.args ?? [])];
      let path: string | undefined;
      words.forEach((w, i) => {
        const m = /^--?config(?:=(.*))?$/.exec(w);
        if (m) path = m[1] ?? words[i + 1];
      });
      if (!path) continue;
      const trim = (p: string) => p.replace(/\/+$/, "");
      for (const mnt of c.volumeMounts ?? []) {
        const cm = (spec?.volumes ?? []).find((v) => v.name === mnt.name)?.configMap?.name;
        if (!cm) continue;
        let key: string | undefined;
        if (mnt.subPath && trim(mnt.mountPath) === path) key = mnt.subPath;
        else if (!mnt.subPath && trim(mnt.mountPath) === path.slice(0, path.lastIndexOf("/"))) {
          key = path.slice(path.lastIndexOf("/") + 1);
        }
        if (key) out.set(cm, (out.get(cm) ?? new Set()).add(key));
      }
    }
  }
  return out;
}

/**
 * The objects of a bundle reduced to the allow-list of their kind (see the module comment): what a bundle keeps.
 * Idempotent; the input is not modified.
 * @param objects the objects as the API returned them.
 * @returns new objects holding only the kept fields, secrets redacted.
 */
export function allowListObjects(objects: BundleObjects): BundleObjects {
  const out = {} as BundleObjects;
  const configKeys = configFileKeys(objects);
  for (const key of Object.keys(KINDS) as (keyof BundleObjects)[]) {
    const list = (objects[key] ?? []) as unknown[];
    const kept = list.map((o) => apply(o, KINDS[key]) as Record<string, unknown>);
    if (key === "configMaps") {
      kept.forEach((cm, i) => {
        const name = (cm.metadata as { name?: string } | undefined)?.name ?? "";
        const data = proxyConfigData((list[i] as { data?: unknown }).data, configKeys.get(name) ?? new Set());
        if (data) cm.data = data;
        else delete cm.data;
      });
    }
    (out as unknown as Record<string, unknown>)[key] = kept;
  }
  return out;
}

// Issue 13 defect 2: a bundle is made to be handed around, so `capture` keeps only the fields the analyses read (an
// allow-list per kind, src/bundle/allow_list.ts), no ConfigMap key but kube-proxy's configuration, credentials in the
// text that remains redacted, and writes the file 0600. The fake cluster is seeded with secret-bearing fields in every
// kind a bundle holds; none of their values may appear in the captured bytes (JSON and YAML), and `--from` the file
// must give the live report (the allow-list kept what the analyses read). Every example bundle reduced to the
// allow-list gives the same `-o json` and text report as the example itself.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { afterAll, describe, expect, it } from "vitest";
import { allowListObjects, redactArgv, REDACTED, redactText } from "../src/bundle/allow_list.ts";
import type { BundleObjects } from "../src/bundle/bundle.ts";
import { decodeBundle, encodeBundle } from "../src/bundle/decode.ts";
import { readBundle } from "../src/io/read_bundle.ts";
import type {
  ConfigMap,
  DaemonSet,
  KubeEvent,
  PersistentVolume,
  Pod,
  Service,
  StorageClass,
} from "../src/model/k8s.ts";
import { type FakeApiServer, startFakeApiServer } from "./helpers/fake_apiserver.ts";
import { run } from "./helpers/live_cli.ts";

const CERT_B64 = Buffer.from(
  "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUSECRETCERTDATA\n-----END CERTIFICATE-----\n",
).toString("base64");
const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQPRIVATEKEYBODY";
const JWT =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6Imp3dC1zZWNyZXQifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06a3ViZS1wcm94eSJ9.c2lnbmF0dXJlLXNlY3JldA";

/** Every secret value seeded into the fake cluster: none may appear in a captured bundle. */
const SECRETS = [
  "kubeconfig-token-0a1b2c", // kube-proxy ConfigMap key kubeconfig.conf
  CERT_B64.slice(0, 40), // certificate-authority-data in kubeconfig.conf and in annotations
  "hunter2", // --password=hunter2 (a Pod container arg)
  "split-token-3d4e5f", // --token split-token-3d4e5f (two words)
  "env-value-secret-6a7b", // container env value
  "DB_PASSWORD", // an env variable name: env is not kept at all
  "last-applied-secret-8c9d", // last-applied-configuration annotation
  "event-token-9e8f", // Event messages
  "bearer-secret-7g6h",
  PEM_BODY, // a PEM private key in an Event message
  JWT.split(".")[2]!,
  "sc-provisioner-secret-5i4j", // StorageClass csi.storage.k8s.io/provisioner-secret-name
  "sc-restuserkey-value-3k2l", // an in-tree provisioner's credential parameter
  "pv-volume-attribute-secret-1m0n", // PV CSI volumeAttributes
  "pv-node-publish-secret-2o3p", // PV CSI nodePublishSecretRef
  "ds-password-4q5r", // kube-proxy DaemonSet args
  "ds-env-secret-6s7t", // kube-proxy DaemonSet env
  "node-annotation-secret-8u9v", // a Node annotation
  "ready-message-token-0w1x", // a Pod's Ready condition message
] as const;

const web = readBundle("tests/fixtures/live/web");
const zones = readBundle("examples/azure-zones");

function secretContainer(name: string): Record<string, unknown> {
  return {
    name,
    image: "nginx:1.27",
    args: ["--listen=:80", "--password=hunter2", "--token", "split-token-3d4e5f", `--ca-data=${CERT_B64}`],
    env: [{ name: "DB_PASSWORD", value: "env-value-secret-6a7b" }, { name: "CA", value: CERT_B64 }],
    ports: [{ name: "http", containerPort: 80, protocol: "TCP" }],
  };
}

/** The web cluster and the azure-zones cluster in one, every secret-bearing field filled in. */
function seededObjects(): BundleObjects {
  const o = structuredClone(web.objects);
  const z = structuredClone(zones.objects);
  const lastApplied = {
    "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({
      env: [{ name: "X", value: "last-applied-secret-8c9d" }],
    }),
  };
  for (const p of [...o.pods, ...z.pods]) {
    p.metadata.annotations = { ...p.metadata.annotations, ...lastApplied, "example.com/ca": CERT_B64 };
    p.spec = {
      ...p.spec,
      containers: (p.spec?.containers ?? []).map((c) => ({ ...c, ...secretContainer(c.name) })) as NonNullable<
        Pod["spec"]
      >["containers"],
    };
  }
  for (const n of [...o.nodes, ...z.nodes]) {
    n.metadata.annotations = { ...n.metadata.annotations, "example.com/join-token": "node-annotation-secret-8u9v" };
    n.status = { ...n.status, images: [{ names: ["registry.example.com/app@sha256:node-annotation-secret-8u9v"] }] };
  }
  const cm = o.configMaps[0] as ConfigMap;
  cm.data = {
    ...cm.data,
    "kubeconfig.conf": [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- cluster: {certificate-authority-data: ${CERT_B64}, server: https://10.0.0.1:6443}`,
      "  name: default",
      "users:",
      "- name: default",
      "  user: {token: kubeconfig-token-0a1b2c}",
      "",
    ].join("\n"),
  };
  const ds: DaemonSet & Record<string, unknown> = {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "kube-proxy", namespace: "kube-system", annotations: lastApplied },
    spec: {
      template: {
        spec: {
          containers: [{
            name: "kube-proxy",
            command: [
              "/usr/local/bin/kube-proxy",
              "--config=/var/lib/kube-proxy/config.conf",
              "--hostname-override=$(NODE_NAME)",
              "--password=ds-password-4q5r",
            ],
            env: [{ name: "SECRET", value: "ds-env-secret-6s7t" }],
            volumeMounts: [{ name: "kube-proxy", mountPath: "/var/lib/kube-proxy" }],
          } as never],
          volumes: [
            { name: "kube-proxy", configMap: { name: "kube-proxy" } },
            { name: "token", secret: { secretName: "ds-env-secret-6s7t" } } as never,
          ],
        },
      },
    },
  };
  o.daemonSets = [ds];
  // A Service with no ready endpoint: the gather reads its Pods and their readiness Events.
  const down: Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "down", namespace: "default" },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.96.7.7",
      clusterIPs: ["10.96.7.7"],
      selector: { app: "down" },
      ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }],
    },
  };
  o.services.push(down);
  o.endpointSlices.push({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "down-abc",
      namespace: "default",
      labels: {
        "kubernetes.io/service-name": "down",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    endpoints: [{
      addresses: ["10.244.1.9"],
      conditions: { ready: false, serving: false, terminating: false },
      nodeName: "k8s-guide-worker",
      targetRef: { kind: "Pod", name: "down-1", namespace: "default" },
    }],
    ports: [{ name: "http", port: 80, protocol: "TCP" }],
  });
  o.pods.push({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "down-1", namespace: "default", labels: { app: "down" }, annotations: lastApplied },
    spec: { nodeName: "k8s-guide-worker", containers: [secretContainer("app") as never] },
    status: {
      phase: "Running",
      podIP: "10.244.1.9",
      hostIP: "172.18.0.3",
      conditions: [{
        type: "Ready",
        status: "False",
        reason: "ContainersNotReady",
        message: "probe sent token=ready-message-token-0w1x",
      }],
    },
  });
  const event = (name: string, kind: string, obj: string, reason: string, message: string): KubeEvent => ({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace: "default", annotations: lastApplied },
    involvedObject: { kind, name: obj, namespace: "default" },
    type: "Warning",
    reason,
    message,
    count: 3,
    lastTimestamp: "2026-11-25T04:00:00Z",
    source: { component: "kubelet", host: "k8s-guide-worker" },
  });
  o.events = [
    event(
      "down-1.1",
      "Pod",
      "down-1",
      "Unhealthy",
      "Readiness probe failed: GET http://10.244.1.9/healthz?token=event-token-9e8f: Authorization: Bearer bearer-secret-7g6h",
    ),
  ];
  z.events.push(
    event(
      "busybox.secret",
      "Pod",
      "busybox",
      "FailedMount",
      `MountVolume.SetUp failed: -----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY----- token: ${JWT}`,
    ),
    event(
      "md.secret",
      "PersistentVolumeClaim",
      "md",
      "ProvisioningFailed",
      `client-key-data: ${CERT_B64} password=hunter2`,
    ),
  );
  for (const sc of z.storageClasses as (StorageClass & Record<string, unknown>)[]) {
    sc.parameters = {
      ...sc.parameters,
      "csi.storage.k8s.io/provisioner-secret-name": "sc-provisioner-secret-5i4j",
      restuserkey: "sc-restuserkey-value-3k2l",
    };
  }
  for (const pv of z.persistentVolumes as PersistentVolume[]) {
    pv.spec = {
      ...pv.spec,
      mountOptions: ["password=hunter2"],
      csi: {
        driver: "disk.csi.azure.com",
        volumeHandle: "vh",
        volumeAttributes: { password: "pv-volume-attribute-secret-1m0n" },
        nodePublishSecretRef: { name: "pv-node-publish-secret-2o3p", namespace: "default" },
      },
    };
  }
  return {
    ...o,
    nodes: [...o.nodes, ...z.nodes],
    pods: [...o.pods, ...z.pods],
    persistentVolumeClaims: z.persistentVolumeClaims,
    persistentVolumes: z.persistentVolumes,
    storageClasses: z.storageClasses,
    events: [...o.events, ...z.events],
  };
}

const servers: FakeApiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const captures = [
  { name: "svc/web", target: ["svc/web", "-n", "default"] },
  { name: "svc/down (no ready endpoint: Pods and Events)", target: ["svc/down", "-n", "default"] },
  { name: "pod/busybox --why-pending", target: ["pod/busybox", "-n", "default"], pending: true },
  { name: "pvc/md --why-pending", target: ["pvc/md", "-n", "default"], pending: true },
];

describe("capture keeps no secret (JSON and YAML), writes 0600, and --from the file gives the live report", () => {
  it("the seeded cluster really holds every secret (the test can fail)", () => {
    const text = JSON.stringify(seededObjects());
    for (const s of SECRETS) expect(text, s).toContain(s);
  });

  it.each(captures.flatMap((c) => (["json", "yaml"] as const).map((format) => ({ ...c, format }))))(
    "$name as $format",
    async ({ target, pending, format }) => {
      const s = await startFakeApiServer({ objects: seededObjects() });
      servers.push(s);
      const out = join(s.dir, `bundle.${format}`);
      writeFileSync(out, "old content\n", { mode: 0o644 });
      chmodSync(out, 0o644); // an existing, world-readable file is overwritten 0600 too
      const why = pending ? ["--why-pending"] : [];
      const c = await run(["capture", ...target, "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
      expect(c.stderr).not.toMatch(/^error/m);
      expect(c.code).toBe(0);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const bytes = readFileSync(out, "utf8");
      for (const secret of SECRETS) expect(bytes, `secret ${secret} in the ${format} bundle`).not.toContain(secret);
      const b = decodeBundle(bytes, out);
      // What the analyses read is still there.
      if (!pending) {
        const cm = b.objects.configMaps.find((x) => x.metadata.name === "kube-proxy")!;
        expect(Object.keys(cm.data ?? {})).toEqual(["config.conf"]);
        expect(cm.data!["config.conf"]).toContain("kind: KubeProxyConfiguration");
        const ds = b.objects.daemonSets[0]!.spec!.template!.spec!.containers![0]!;
        expect(ds.command).toEqual([
          "/usr/local/bin/kube-proxy",
          "--config=/var/lib/kube-proxy/config.conf",
          "--hostname-override=$(NODE_NAME)",
          `--password=${REDACTED}`,
        ]);
        for (const p of b.objects.pods) {
          for (const ctr of p.spec?.containers ?? []) {
            expect(Object.keys(ctr).sort()).toEqual(["name", "ports"]);
          }
        }
      } else {
        expect(b.objects.storageClasses.map((x) => x.parameters)).toEqual(
          zones.objects.storageClasses.map((x) => x.parameters),
        );
        for (const pv of b.objects.persistentVolumes) expect(pv.spec!["csi"]).toEqual({ driver: "disk.csi.azure.com" });
        expect(b.objects.events.map((e) => e.message).join("\n")).toContain(REDACTED);
      }
      for (const o of [...b.objects.pods, ...b.objects.nodes, ...b.objects.events]) {
        expect(
          Object.keys(o.metadata.annotations ?? {}).filter((k) =>
            !k.includes("storage-class") && !k.includes("selected-node")
          ),
        ).toEqual([]);
      }
      for (const o of ["text", "json"]) {
        const live = await run([...target, ...why, "--kubeconfig", s.kubeconfig, "--no-exec", "-o", o]);
        const offline = await run([...target, ...why, "--from", out, "-o", o]);
        expect(live.code).toBe(offline.code);
        expect(offline.stdout).toBe(live.stdout);
        expect(offline.stdout.length).toBeGreaterThan(200);
      }
    },
  );
});

describe("capture: what the run says about itself is redacted, and the file is written whole or not at all", () => {
  it("a warning quoting the API server's error (a 500's body with credentials) is redacted in the bundle", async () => {
    const s = await startFakeApiServer({
      objects: seededObjects(),
      faults: [{ method: "GET", path: /^\/api\/v1\/namespaces\/default\/pods$/, status: 500, message: "etcd https://root:ETCDPW123@10.0.0.5:2379 failed; Authorization: Bearer SRVBEARER99; password=SRV500PW" }],
    });
    servers.push(s);
    const out = join(s.dir, "warned.json");
    // svc/down has no ready endpoint: the Pods that would say why are listed, and that list's failure is a warning
    const c = await run(["capture", "svc/down", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", out]);
    const bytes = readFileSync(out, "utf8");
    const b = decodeBundle(bytes, out);
    expect(b.warnings.join("\n"), c.stderr).toContain(REDACTED);
    for (const secret of ["ETCDPW123", "SRVBEARER99", "SRV500PW"]) expect(bytes).not.toContain(secret);
  });

  it("an -o path whose directory does not exist is refused before anything is collected", async () => {
    const s = await startFakeApiServer({ objects: seededObjects() });
    servers.push(s);
    const c = await run(["capture", "svc/web", "-n", "default", "--kubeconfig", s.kubeconfig, "--no-exec", "-o", join(s.dir, "missing", "x.json")]);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/^error: capture -o \S+\/missing\/x\.json: directory \S+\/missing does not exist: give a file path in a writable directory \(nothing was collected\)\n$/);
    expect(s.requests).toEqual([]);
  });

  it.runIf(existsSync("dist/kubectl-netpath.cjs"))("a write that fails part-way (file size limit) leaves the old bundle as it was, and no temporary file", async () => {
    const s = await startFakeApiServer({ objects: seededObjects() });
    servers.push(s);
    const dir = mkdtempSync(join(tmpdir(), "knp-capture-write-"));
    const out = join(dir, "bundle.json");
    writeFileSync(out, "the previous bundle\n", { mode: 0o600 });
    // ulimit -f 4: at most 4 blocks written per file; the bundle is larger, the write fails with EFBIG
    // asynchronously: the fake API server answers from this process
    const r = await new Promise<{ status: number | null; stderr: string }>((res) => {
      const child = spawn("sh", ["-c", `ulimit -f 4; exec "$0" dist/kubectl-netpath.cjs capture svc/web -n default --kubeconfig "$1" --no-exec -o "$2"`, process.execPath, s.kubeconfig, out]);
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (status) => res({ status, stderr }));
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error: cannot write the bundle to \S+bundle\.json \(EFBIG\): nothing was written there/);
    expect(readFileSync(out, "utf8")).toBe("the previous bundle\n");
    expect(readdirSync(dir)).toEqual(["bundle.json"]);
  });
});

describe("the allow-list keeps what the analyses read: every example reduced to it gives the same report", () => {
  const dir = mkdtempSync(join(tmpdir(), "netpath-allow-"));
  const cases: { name: string; args: string[]; file: string; source: string }[] = [];
  for (const ex of readdirSync("examples").sort()) {
    const source = join("examples", ex);
    const b = readBundle(source);
    const file = join(dir, `${ex}.json`);
    writeFileSync(file, encodeBundle({ ...b, objects: allowListObjects(b.objects), warnings: [] }, "json"));
    for (const svc of b.objects.services) {
      cases.push({
        name: `${ex} svc/${svc.metadata.name}`,
        args: [`svc/${svc.metadata.name}`, "-n", svc.metadata.namespace ?? "default"],
        file,
        source,
      });
    }
    for (
      const p of b.objects.pods.filter((x) =>
        x.status?.phase === "Pending" || (x.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim)
      )
    ) {
      cases.push({
        name: `${ex} pod/${p.metadata.name}`,
        args: [`pod/${p.metadata.name}`, "-n", p.metadata.namespace ?? "default", "--why-pending"],
        file,
        source,
      });
    }
    for (const c of b.objects.persistentVolumeClaims) {
      cases.push({
        name: `${ex} pvc/${c.metadata.name}`,
        args: [`pvc/${c.metadata.name}`, "-n", c.metadata.namespace ?? "default", "--why-pending"],
        file,
        source,
      });
    }
  }
  it("covers Services and pending objects", () => {
    expect(cases.filter((c) => c.args[0]!.startsWith("svc/")).length).toBeGreaterThan(10);
    expect(cases.filter((c) => c.args.includes("--why-pending")).length).toBeGreaterThanOrEqual(4);
  });
  it.each(cases)("$name", async ({ args, file, source }) => {
    for (const o of ["json", "text"]) {
      const want = await run([...args, "--from", source, "-o", o]);
      const got = await run([...args, "--from", file, "-o", o]);
      expect(got.code).toBe(want.code);
      expect(got.stdout).toBe(want.stdout);
    }
  });
});

describe("redaction", () => {
  it.each([
    ["--password=hunter2", `--password=${REDACTED}`],
    ["--db-password=hunter2 --x=1", `--db-password=${REDACTED} --x=1`],
    ["token: abc123", `token: ${REDACTED}`],
    ['{"client-key-data": "QUJD"}', `{"client-key-data": ${REDACTED}}`],
    ["Authorization: Bearer abc.def", `Authorization: Bearer ${REDACTED}`],
    [`x ${JWT} y`, `x ${REDACTED} y`],
    [`-----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END RSA PRIVATE KEY-----\nrest`, `${REDACTED}\nrest`],
    [`-----BEGIN CERTIFICATE-----\nAAA (cut)`, REDACTED],
    [`ca=${CERT_B64}`, `ca=${REDACTED}`],
    [
      "pull https://robot:s3cr3t-pw@registry.example.com/v2/app failed",
      `pull https://robot:${REDACTED}@registry.example.com/v2/app failed`,
    ],
    [
      "GET https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=AbC%2Bd&se=1",
      `GET https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=${REDACTED}&se=1`,
    ],
    [
      "AWS_SECRET_ACCESS_KEY=abc AWS_ACCESS_KEY_ID=AKIA1",
      `AWS_SECRET_ACCESS_KEY=${REDACTED} AWS_ACCESS_KEY_ID=${REDACTED}`,
    ],
    ["--private-key=abc passphrase: pp", `--private-key=${REDACTED} passphrase: ${REDACTED}`],
    // a secret flag's value inside one string (a kube-proxy DaemonSet started by sh -c), and a YAML block scalar
    ["exec kube-proxy --config=/x --token SHTOKEN --aws-secret-access-key SHAWS --v=2", `exec kube-proxy --config=/x --token ${REDACTED} --aws-secret-access-key ${REDACTED} --v=2`],
    ["mode: iptables\ntoken: |\n  CMBLOCKTOKEN\n  more\nnext: 2", `mode: iptables\ntoken: ${REDACTED}\nnext: 2`],
    // found by an audit: an empty user, a password holding @, a value holding & or spaces, an escaped quote inside a
    // JSON string, a GitHub-style `Authorization: token …`, names ending in `pass`
    ["redis://:S3cretRedisPw@redis:6379/0", `redis://:${REDACTED}@redis:6379/0`],
    ["https://user:p@ss@host/x", `https://user:${REDACTED}@host/x`],
    ["password=Pa&ssw0rd", `password=${REDACTED}`],
    ["password: hunter 2, user: x", `password: ${REDACTED}, user: x`],
    ['{"password": "Pa\\"ss wOrd", "n": 1}', `{"password": ${REDACTED}, "n": 1}`],
    ["Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789", `Authorization: ${REDACTED}`],
    ["DB_PASS=hunter2 --pass hunter3 db.pass: x", `DB_PASS=${REDACTED} --pass ${REDACTED} db.pass: ${REDACTED}`],
    // found by an audit: credentials as short options (MySQL's glued -pPASSWORD, sshpass -p, curl -u user:password)
    // and a Docker config's "auth" (base64 of user:password)
    ["Readiness probe failed: mysqladmin ping -h 127.0.0.1 -uroot -pMyS3cret", `Readiness probe failed: mysqladmin ping -h 127.0.0.1 -uroot -p${REDACTED}`],
    ["mysql -u root -pMyS3cret db && echo ok", `mysql -u root -p${REDACTED} db && echo ok`],
    ["mysql -u root -p'my s3cret' db", `mysql -u root -p${REDACTED} db`],
    ["exec /usr/bin/mysql -p MyS3cret", `exec /usr/bin/mysql -p ${REDACTED}`],
    ["sh -c 'sshpass -p MyS3cret ssh backup@host'", `sh -c 'sshpass -p ${REDACTED} ssh backup@host'`],
    ["curl -u admin:MyS3cret https://x", `curl -u admin:${REDACTED} https://x`],
    ["curl -sf --user admin:MyS3cret https://x", `curl -sf --user admin:${REDACTED} https://x`],
    ["curl --user=admin:MyS3cret -uother:Pw2 x", `curl --user=admin:${REDACTED} -uother:${REDACTED} x`],
    ['{"auths":{"registry.example.com":{"auth":"YWRtaW46aHVudGVyMg=="}}}', `{"auths":{"registry.example.com":{"auth":${REDACTED}}}}`],
    ["--auth-key=abc --auth xyz", `--auth-key=${REDACTED} --auth ${REDACTED}`],
  ])("%j", (input, want) => {
    expect(redactText(input)).toBe(want);
    expect(redactText(want)).toBe(want);
  });

  it("leaves analysed text alone", () => {
    for (
      const t of [
        "--config=/var/lib/kube-proxy/config.conf",
        "--proxy-mode=ipvs",
        "--cluster-cidr=10.244.0.0/16",
        "0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
        'MountVolume.SetUp failed for volume "kube-api-access" : secret "x" not found',
        "bypass=true compass: north passthrough=1 ssl-passthrough: true",
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\nmode: nftables\n",
        // -p is a password only after a command whose -p is one (mysql, sshpass, mongo), or glued after a user flag:
        // iptables' protocol (even in a rule whose comment names a Service "mysql"), psql's port, kube-proxy's flags
        "-A KUBE-SVC-X -p tcp -m tcp --dport 80 -j KUBE-SEP-Y",
        '-A KUBE-SERVICES -d 10.96.0.5/32 -m comment --comment "db/mysql:mysql cluster IP" -p tcp -m tcp --dport 3306 -j KUBE-SVC-Z',
        "node k8s1: iptables-save line 12: -A KUBE-SEP-Y -p udp -m udp -j DNAT --to-destination 10.244.0.5:53",
        "psql -h db -p 5432 -U app",
        "echo mysql -p tcp",
        "kube-proxy -v=2 --proxy-mode=ipvs --port 8080 --cluster-cidr=10.244.0.0/16",
        "curl -u admin https://x",
        "Failed to pull image: unauthorized: authentication required",
        "auth-provider: gcp",
      ]
    ) expect(redactText(t)).toBe(t);
  });

  it("the word after a bare secret flag", () => {
    expect(redactArgv(["app", "--token", "abc", "--port", "80", "--password=x"])).toEqual([
      "app",
      "--token",
      REDACTED,
      "--port",
      "80",
      `--password=${REDACTED}`,
    ]);
  });

  it("short options that carry a password, in argv", () => {
    expect(redactArgv(["mysql", "-u", "root", "-pMyS3cret", "db"])).toEqual(["mysql", "-u", "root", `-p${REDACTED}`, "db"]);
    expect(redactArgv(["/usr/bin/sshpass", "-p", "MyS3cret", "ssh", "x"])).toEqual(["/usr/bin/sshpass", "-p", REDACTED, "ssh", "x"]);
    expect(redactArgv(["tool", "-u", "admin", "-pMyS3cret"])).toEqual(["tool", "-u", "admin", `-p${REDACTED}`]);
    expect(redactArgv(["curl", "-u", "admin:MyS3cret", "https://x"])).toEqual(["curl", "-u", `admin:${REDACTED}`, "https://x"]);
    expect(redactArgv(["sh", "-c", "mysql -uroot -pMyS3cret db"])).toEqual(["sh", "-c", `mysql -uroot -p${REDACTED} db`]);
    // not a password: kube-proxy's flags, a port, a -p without a password command or a user flag before it
    for (const a of [["kube-proxy", "--v=2", "--proxy-mode=ipvs", "-p", "80"], ["psql", "-p", "5432"], ["app", "-pfoo"]]) expect(redactArgv(a)).toEqual(a);
  });

  it("a captured DaemonSet's commands, an Event and a Pod condition keep no short-option password", () => {
    const o = structuredClone(web.objects);
    o.daemonSets = [{
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "db-backup", namespace: "default" },
      spec: {
        template: {
          spec: {
            containers: [
              { name: "dump", command: ["mysqldump", "-u", "backup", "-pDsMysqlPw1"], args: ["--all-databases"] },
              { name: "push", command: ["sh", "-c", "curl -sf --user backup:DsCurlPw2 -T /dump https://store"] },
            ],
          },
        },
      },
    } as DaemonSet];
    o.events = [{
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "db-0.1", namespace: "default" },
      involvedObject: { kind: "Pod", name: "db-0", namespace: "default" },
      type: "Warning",
      reason: "Unhealthy",
      message: 'Liveness probe failed: mysqladmin -uroot -pEvMysqlPw3 ping; auth: {"auth":"ZXY6cHc0"}',
    } as KubeEvent];
    const pod = o.pods[0]!;
    pod.status = { ...pod.status, conditions: [{ type: "Ready", status: "False", message: "probe: sshpass -p CondPw5 ssh x" }] } as Pod["status"];
    const kept = JSON.stringify(allowListObjects(o));
    for (const secret of ["DsMysqlPw1", "DsCurlPw2", "EvMysqlPw3", "ZXY6cHc0", "CondPw5"]) expect(kept).not.toContain(secret);
    expect(kept).toContain(`"mysqldump","-u","backup","-p${REDACTED}"`);
    expect(kept).toContain(`--user backup:${REDACTED} -T /dump https://store`);
  });

  it("allowListObjects is idempotent and does not modify its input", () => {
    const o = seededObjects();
    const before = JSON.stringify(o);
    const once = allowListObjects(o);
    expect(JSON.stringify(o)).toBe(before);
    expect(allowListObjects(once)).toEqual(once);
    for (const secret of SECRETS) expect(JSON.stringify(once)).not.toContain(secret);
  });
});

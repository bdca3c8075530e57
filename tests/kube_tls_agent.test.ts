// src/kube/tls_agent.ts against a real TLS server (the fake cluster's PKI, client certificates): the REST requests of a
// run share one connection, later connections resume the TLS session instead of a full handshake, and nothing about
// trust changes (another CA gets its own agent and is refused by this server; a proxy agent is left alone).
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeRest } from "../src/kube/rest.ts";
import { shareTlsAgent } from "../src/kube/tls_agent.ts";
import { makePki } from "./helpers/fake_pki.ts";

const pki = makePki({ user: "tls-test" });
const b64 = (s: string) => Buffer.from(s).toString("base64");
let server: https.Server;
let url = "";
const handshakes: { reused: boolean; user: string }[] = [];

function kubeconfig(ca = pki.caCert): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: url, caData: b64(ca) }],
    users: [{ name: "u", certData: b64(pki.clientCert), keyData: b64(pki.clientKey) }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

/** One GET with these options (the server closes the connection after it). */
function get(opts: https.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = https.request({ ...opts, hostname: u.hostname, port: u.port, path: "/api/v1/namespaces/default/services/web", headers: { Connection: "close" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  server = https.createServer({ cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert, requestCert: true, rejectUnauthorized: true }, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "Service", apiVersion: "v1", metadata: { name: "web", namespace: "default" }, spec: { type: "ClusterIP", clusterIP: "10.96.0.9", ports: [{ port: 80, protocol: "TCP" }] } }));
  });
  server.on("secureConnection", (s: TLSSocket) => handshakes.push({ reused: s.isSessionReused(), user: String(s.getPeerCertificate().subject?.CN) }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("one TLS agent per kubeconfig (src/kube/tls_agent.ts)", () => {
  it("REST: several requests, one connection (keep-alive), the client certificate presented", async () => {
    handshakes.length = 0;
    const rest = new KubeRest(kubeconfig(), { context: "x" });
    for (let i = 0; i < 4; i++) {
      const svc = await rest.get<{ metadata: { name: string } }>({ group: "", version: "v1", resource: "services", namespace: "default", name: "web" });
      expect(svc.metadata.name).toBe("web");
    }
    expect(handshakes).toEqual([{ reused: false, user: "tls-test" }]);
  });

  it("connections after the first (each exec's WebSocket) resume the TLS session on the shared agent", async () => {
    handshakes.length = 0;
    const kc = kubeconfig();
    const agents = new Set<unknown>();
    for (let i = 0; i < 3; i++) {
      // what client-node gives the exec's WebSocket factory: new options and a new https.Agent each time
      const opts: Record<string, unknown> = {};
      await kc.applyToHTTPSOptions(opts as never);
      const fresh = opts.agent;
      shareTlsAgent(kc, opts);
      expect(opts.agent).not.toBe(fresh);
      agents.add(opts.agent);
      expect(await get(opts as https.RequestOptions)).toBe(200);
    }
    expect(agents.size).toBe(1);
    expect(handshakes.map((h) => h.reused)).toEqual([false, true, true]);
    expect(handshakes.every((h) => h.user === "tls-test")).toBe(true);
    // without it (client-node's own agents) every connection is a full handshake
    handshakes.length = 0;
    for (let i = 0; i < 2; i++) {
      const opts: Record<string, unknown> = {};
      await kc.applyToHTTPSOptions(opts as never);
      expect(await get(opts as https.RequestOptions)).toBe(200);
    }
    expect(handshakes.map((h) => h.reused)).toEqual([false, false]);
  });

  it("trust is unchanged: a kubeconfig with another CA gets its own agent, and this server's certificate is refused", async () => {
    const kc = kubeconfig();
    const other = makePki({ user: "other" }, "node:crypto");
    const a: Record<string, unknown> = {};
    await kc.applyToHTTPSOptions(a as never);
    shareTlsAgent(kc, a);
    const wrong = kubeconfig(other.caCert);
    const b: Record<string, unknown> = {};
    await wrong.applyToHTTPSOptions(b as never);
    shareTlsAgent(wrong, b);
    expect(b.agent).not.toBe(a.agent);
    await expect(get(b as https.RequestOptions)).rejects.toThrow(/certificate/i);
    // the same KubeConfig object, its CA changed: a new agent, not the one built for the old CA
    const c: Record<string, unknown> = { ...a, ca: other.caCert };
    shareTlsAgent(kc, c);
    expect(c.agent).not.toBe(a.agent);
    await expect(get(c as https.RequestOptions)).rejects.toThrow(/certificate/i);
  });

  it("the same options read anew (new Buffers, same bytes) keep the agent; other bytes or another field replace it", () => {
    const owner = {};
    const opts = (ca: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ agent: new https.Agent(), ca, ...extra });
    const a = opts(Buffer.from(pki.caCert));
    shareTlsAgent(owner, a);
    const again = opts(Buffer.from(pki.caCert));
    shareTlsAgent(owner, again);
    expect(again.agent).toBe(a.agent);
    const asList = opts([Buffer.from(pki.caCert)]);
    shareTlsAgent(owner, asList);
    expect(asList.agent).not.toBe(a.agent);
    const flipped = Buffer.from(pki.caCert);
    flipped[flipped.length - 30] = flipped[flipped.length - 30]! ^ 1;
    const otherBytes = opts(flipped);
    shareTlsAgent(owner, otherBytes);
    expect(otherBytes.agent).not.toBe(asList.agent);
    const insecure = opts(Buffer.from(pki.caCert), { rejectUnauthorized: false });
    shareTlsAgent(owner, insecure);
    const plainCa = opts(Buffer.from(pki.caCert));
    shareTlsAgent(owner, plainCa);
    expect(plainCa.agent).not.toBe(insecure.agent);
  });

  it("a proxy agent (a subclass of https.Agent) and plain HTTP options are left as client-node made them", () => {
    class ProxyAgent extends https.Agent {}
    const proxy = new ProxyAgent();
    const o: Record<string, unknown> = { agent: proxy, ca: pki.caCert };
    shareTlsAgent({}, o);
    expect(o.agent).toBe(proxy);
    const plain: Record<string, unknown> = {};
    shareTlsAgent({}, plain);
    expect(plain.agent).toBeUndefined();
  });
});

/**
 * Edge: one HTTPS agent per kubeconfig cluster for every connection of a run: the REST requests and each exec's
 * WebSocket. client-node's `applyToHTTPSOptions` makes a new `https.Agent` on every call, and `tls.connect` a new
 * secure context (the CA bundle parsed again) for every connection; a question about one Service on 16 nodes opens
 * about 20 connections. The shared agent builds the secure context once, keeps REST connections alive between
 * requests, and keeps TLS sessions, so the WebSockets after the first resume instead of verifying the certificate
 * chain again. Nothing about what is trusted changes: the agent is made from the same options (CA, client
 * certificate and key, `rejectUnauthorized`, server name) client-node derived from the kubeconfig.
 *
 * Only a plain `https.Agent` is replaced; a proxy agent (`proxy-url` in the kubeconfig) and plain HTTP are left as
 * client-node made them.
 * @module
 */
import { Buffer } from "node:buffer";
import * as https from "node:https";
import * as tls from "node:tls";

/** The TLS fields of client-node's request options (what it copies into its own agent). */
const TLS_FIELDS = [
  "ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername", "ciphers", "honorCipherOrder", "ecdhCurve",
  "crl", "dhparam", "secureOptions", "secureProtocol", "sessionIdContext",
] as const;

const agents = new WeakMap<object, { fields: Record<string, unknown>; agent: https.Agent }>();

/** Whether two TLS option values are the same: bytes compared as bytes (client-node reads the kubeconfig's anew). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  return false;
}

function sameFields(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return TLS_FIELDS.every((f) => sameValue(a[f], b[f]));
}

/**
 * Puts the shared agent of `owner` (the KubeConfig) into request options made by client-node's
 * `applyToHTTPSOptions`, in place of the fresh `https.Agent` it made.
 * @param owner the object the agent lives with (the run's KubeConfig); a later call with different TLS options
 *   makes a new agent.
 * @param opts request options as client-node filled them; changed in place (`agent`).
 * @returns nothing; leaves `opts` alone when its agent is not a plain `https.Agent` (proxy agents, HTTP) or when
 *   the runtime cannot build a secure context from these options (the caller's own agent is then used as is).
 */
export function shareTlsAgent(owner: object, opts: Record<string, unknown>): void {
  if (!(opts.agent instanceof https.Agent) || opts.agent.constructor !== https.Agent) return;
  const fields: Record<string, unknown> = {};
  for (const f of TLS_FIELDS) if (opts[f] !== undefined) fields[f] = opts[f];
  let entry = agents.get(owner);
  if (!entry || !sameFields(entry.fields, fields)) {
    let secureContext: tls.SecureContext | undefined;
    try {
      secureContext = tls.createSecureContext(fields as tls.SecureContextOptions);
    } catch {
      return;
    }
    entry = { fields, agent: new https.Agent({ ...fields, secureContext, keepAlive: true }) };
    agents.set(owner, entry);
  }
  opts.agent = entry.agent;
}

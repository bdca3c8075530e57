/**
 * Parser of Cilium's service table as `cilium-dbg service list -o json` prints it (`cilium service list -o json`
 * before Cilium 1.15): a JSON array of `{spec, status: {realized}}` objects whose shape is Cilium's API model
 * (cilium/cilium api/v1/models: ServiceSpec, FrontendAddress, BackendAddress, ServiceSpecFlags):
 * `spec.frontend-address` `{ip, port, protocol, scope}`, `spec.backend-addresses[]` `{ip, port, protocol, nodeName,
 * state (active | terminating | quarantined | maintenance), weight, preferred}`, `spec.flags` `{type (ClusterIP,
 * NodePort, ExternalIPs, HostPort, LoadBalancer, LocalRedirect), trafficPolicy, extTrafficPolicy, intTrafficPolicy,
 * name, namespace, natPolicy, healthCheckNodePort}`. Older agents omit `state` (active), `protocol` (ANY), `flags`.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";

/** One backend of a Cilium service frontend. */
export interface CiliumBackend {
  ip: string;
  port: number;
  /** `TCP`, `UDP`, `SCTP`, or `ANY` when the agent does not say. */
  protocol: string;
  /** `active` (the default), `terminating`, `quarantined`, `maintenance`. */
  state: string;
  nodeName?: string;
  weight?: number;
}

/** One frontend of Cilium's service table. */
export interface CiliumService {
  id: number | null;
  frontend: { ip: string; port: number; protocol: string; scope: string };
  /** `ClusterIP`, `NodePort`, `ExternalIPs`, `HostPort`, `LoadBalancer`, `LocalRedirect`, or `""` when absent. */
  type: string;
  /** The Kubernetes Service it implements, when the agent says (Cilium 1.9+). */
  namespace?: string;
  name?: string;
  /** `trafficPolicy`, or `extTrafficPolicy`/`intTrafficPolicy` (Cilium 1.14+). */
  extTrafficPolicy?: string;
  intTrafficPolicy?: string;
  backends: CiliumBackend[];
  /** `status.realized` is present: the agent wrote it to its BPF maps. */
  realized: boolean;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Parses `cilium-dbg service list -o json`.
 * @param text the command's stdout.
 * @returns the frontends in the order printed.
 * @throws {DumpParseError} (format `cilium-service-list`) for text that is not that JSON: not JSON, not an array, an
 *   entry without `spec.frontend-address.ip`, or a port that is not a number.
 * @example parseCiliumServiceList('[{"spec":{"id":1,"frontend-address":{"ip":"10.96.0.1","port":443}}}]')[0].frontend.port // 443
 */
export function parseCiliumServiceList(text: string): CiliumService[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new DumpParseError("cilium-service-list", 0, `not JSON (${(e as Error).message}); expected the output of cilium-dbg service list -o json`, text.slice(0, 80));
  }
  if (doc === null) return [];
  if (!Array.isArray(doc)) throw new DumpParseError("cilium-service-list", 0, "expected a JSON array of services", text.slice(0, 80));
  return doc.map((entry, i): CiliumService => {
    const where = (what: string) => new DumpParseError("cilium-service-list", 0, `entry ${i}: ${what}`, JSON.stringify(entry).slice(0, 120));
    if (!isMap(entry) || !isMap(entry.spec)) throw where("no spec");
    const spec = entry.spec;
    const fe = spec["frontend-address"];
    if (!isMap(fe) || typeof fe.ip !== "string") throw where("no frontend-address.ip");
    const num = (v: unknown, what: string): number => {
      if (v === undefined) return 0;
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 65535) throw where(`${what} is not a port number`);
      return v;
    };
    const flags = isMap(spec.flags) ? spec.flags : {};
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    const backends = (Array.isArray(spec["backend-addresses"]) ? spec["backend-addresses"] : []).map((b, j): CiliumBackend => {
      if (!isMap(b) || typeof b.ip !== "string") throw where(`backend ${j} has no ip`);
      const out: CiliumBackend = { ip: b.ip, port: num(b.port, `backend ${j} port`), protocol: str(b.protocol)?.toUpperCase() ?? "ANY", state: str(b.state) ?? "active" };
      if (str(b.nodeName)) out.nodeName = b.nodeName as string;
      if (typeof b.weight === "number") out.weight = b.weight;
      return out;
    });
    const svc: CiliumService = {
      id: typeof spec.id === "number" ? spec.id : null,
      frontend: { ip: fe.ip, port: num(fe.port, "frontend port"), protocol: str(fe.protocol)?.toUpperCase() ?? "ANY", scope: str(fe.scope) ?? "external" },
      type: str(flags.type) ?? "",
      backends,
      realized: isMap(entry.status) && isMap(entry.status.realized),
    };
    if (str(flags.namespace)) svc.namespace = flags.namespace as string;
    if (str(flags.name)) svc.name = flags.name as string;
    const ext = str(flags.extTrafficPolicy) ?? str(flags.trafficPolicy);
    const int = str(flags.intTrafficPolicy) ?? str(flags.trafficPolicy);
    if (ext) svc.extTrafficPolicy = ext;
    if (int) svc.intTrafficPolicy = int;
    return svc;
  });
}

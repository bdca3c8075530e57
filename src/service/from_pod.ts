/**
 * `--from-pod POD` on a saved bundle: the client pod read from the bundle's Pods, as the live path reads it from the
 * API (src/kube/gather_api.ts) — its IP is the packet's source, and its node is where the packet is first handled.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects, CaptureInfo } from "../bundle/bundle.ts";
import { NotFoundError, UsageError } from "../model/errors.ts";
import { isIPv6 } from "../model/ip.ts";
import type { Pod, Service } from "../model/k8s.ts";
import type { PacketQuestion } from "../model/question.ts";
import { formatDestination } from "./entry_points.ts";

/** A pod's addresses: status.podIP first, then the rest of status.podIPs (a dual-stack pod has one per family). */
export function podAddresses(pod: Pod): string[] {
  return [...new Set([pod.status?.podIP, ...(pod.status?.podIPs ?? []).map((x) => x.ip)].filter((ip): ip is string => !!ip))];
}

/**
 * The source a pod's packet to `destination` has: its address of that family (a packet never changes family).
 * @param ips the pod's addresses ({@link podAddresses}).
 * @param destination the packet's destination address.
 * @returns the address, or undefined when the pod has none of that family.
 */
export function podAddressFor(ips: readonly string[], destination: string): string | undefined {
  return ips.find((ip) => isIPv6(ip) === isIPv6(destination));
}

/** The UsageError for a pod without an address of the destination's family. */
export function noAddressOfFamily(name: string, ips: readonly string[], destination: string): UsageError {
  return new UsageError(
    `--from-pod ${name}: the pod has no ${isIPv6(destination) ? "IPv6" : "IPv4"} address to send to ${destination} (its addresses: ${ips.join(", ")}); give --dest an address of its family`,
  );
}

/**
 * The packets `--from-pod` traces when no `--dest` is given: from the pod to every destination of the Service a client
 * pod can send to — each ServicePort (`spec.ports`, in order: kube-dns is 53/UDP, 53/TCP and 9153/TCP) at each
 * ClusterIP (`spec.clusterIPs`, primary family first) of a family the pod has an address of (a packet never changes
 * family; kube-proxy programs each family's rules apart, pkg/proxy/serviceport.go newBaseServiceInfo).
 * @param svc the Service.
 * @param ips the pod's addresses ({@link podAddresses}).
 * @param name the pod's name (for the error).
 * @returns the packets, primary ClusterIP's first, then by `spec.ports` order; empty when the Service has no
 *   ClusterIP (headless, ExternalName) or no port.
 * @throws {UsageError} when the pod has no address of any ClusterIP's family ({@link noAddressOfFamily}, for the
 *   primary one).
 */
export function servicePacketsFromPod(svc: Service, ips: readonly string[], name: string): PacketQuestion[] {
  const clusterIP = svc.spec.clusterIP;
  const ports = svc.spec.ports ?? [];
  if (!clusterIP || clusterIP === "None" || ports.length === 0) return [];
  const vips = [clusterIP, ...(svc.spec.clusterIPs ?? []).filter((ip) => ip !== clusterIP && ip !== "None")];
  const reachable = vips.filter((ip) => podAddressFor(ips, ip) !== undefined);
  if (reachable.length === 0) throw noAddressOfFamily(name, ips, clusterIP);
  const protocol = (p: { protocol?: string }) => (p.protocol ?? "TCP").toLowerCase() as PacketQuestion["protocol"];
  const seen = new Set<string>();
  const out: PacketQuestion[] = [];
  for (const ip of reachable) {
    for (const p of ports) {
      const key = formatDestination(ip, p.port, protocol(p));
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ source: podAddressFor(ips, ip)!, destination: ip, port: p.port, protocol: protocol(p) });
    }
  }
  return out;
}

/**
 * Reads `--from-pod`: `NAME`, `pod/NAME`, or `NAMESPACE/NAME` (a client pod in another namespace than the Service's:
 * an application pod asking for kube-system/kube-dns).
 * @param text the flag's value.
 * @param namespace the Service's namespace (`-n`), the pod's when the value names none.
 * @returns the pod's namespace and name.
 * @throws {UsageError} when a part is empty or has more than one `/`.
 */
export function fromPodRef(text: string, namespace: string): { namespace: string; name: string } {
  const bare = text.replace(/^(pods?|po)\//, "");
  const parts = bare.split("/");
  if (parts.length > 2 || parts.some((p) => p === "")) throw new UsageError(`--from-pod ${text}: give NAME, pod/NAME or NAMESPACE/NAME`);
  return parts.length === 2 ? { namespace: parts[0]!, name: parts[1]! } : { namespace, name: bare };
}

/** The packet questions and the node of a `--from-pod` client. */
export interface FromPodQuestion {
  /** The `--dest` packet with the pod's source, or every destination of the Service ({@link servicePacketsFromPod}). */
  packets: PacketQuestion[];
  /** The pod's node: its rules handle the packet first. */
  node: string;
  pod: string;
}

/**
 * Resolves `--from-pod` against a bundle.
 * @param objects the bundle's objects.
 * @param namespace the namespace of the Service (and of the pod, as kubectl's `-n`).
 * @param fromPod `NAME`, `pod/NAME` or `NAMESPACE/NAME` ({@link fromPodRef}).
 * @param service the Service's name (its ClusterIPs and ports make the packets when `packet` is not given,
 *   {@link servicePacketsFromPod}).
 * @param packet a `--dest` already given: only its source is replaced.
 * @param capture how the bundle was made (its `command` says whether it was captured with `--from-pod`).
 * @returns the packets and the pod's node.
 * @throws {NotFoundError} when the bundle has no such pod (the message says to capture with `--from-pod`, as the pod
 *   may exist in the cluster) or Service.
 * @throws {UsageError} when the pod has no node or IP in the bundle, or the Service no ClusterIP and no --dest.
 */
export function packetFromPod(objects: BundleObjects, namespace: string, fromPod: string, service: string, packet?: PacketQuestion, capture?: CaptureInfo): FromPodQuestion {
  const ref = fromPodRef(fromPod, namespace);
  const name = ref.name;
  const pod = objects.pods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === ref.namespace);
  if (!pod) {
    const elsewhere = objects.pods.filter((p) => p.metadata.name === name).map((p) => p.metadata.namespace ?? "default");
    const e = new NotFoundError("pod", name, ref.namespace);
    // -n names the Service's namespace: a client pod elsewhere is written NAMESPACE/NAME
    if (elsewhere.length > 0) e.message += `; it exists in namespace${elsewhere.length > 1 ? "s" : ""} ${elsewhere.map((n) => `"${n}"`).join(", ")}: use --from-pod ${elsewhere[0]}/${name}`;
    else {
      // not "not found": a bundle holds the pods its capture read (src/kube/gather_api.ts: the endpoints' pods, and
      // the --from-pod client only when captured with it), so a missing pod may well exist in the cluster
      const command = capture?.command?.trim() ?? "";
      const words = command.split(/\s+/);
      const at = words.indexOf("--from-pod");
      const how = !/^kubectl netpath\s/.test(command)
        ? ""
        : at > 0 && words[at + 1] !== undefined
        ? ` (it was captured with --from-pod ${words[at + 1]}: ${command})`
        : ` (it was captured without --from-pod: ${command})`;
      e.message = `--from-pod ${fromPod}: the bundle holds no pod "${name}" in namespace "${ref.namespace}"${how}; a bundle holds the Service's endpoint pods and the client pod it was captured with: capture with --from-pod ${fromPod} to include it`;
    }
    throw e;
  }
  const node = pod.spec?.nodeName;
  const ips = podAddresses(pod);
  if (!node) throw new UsageError(`--from-pod ${name}: the bundle shows the pod on no node (phase ${pod.status?.phase ?? "unknown"})`);
  if (ips.length === 0) throw new UsageError(`--from-pod ${name}: the bundle shows no IP address for the pod (phase ${pod.status?.phase ?? "unknown"})`);
  const sourceFor = (destination: string) => podAddressFor(ips, destination) ?? (() => { throw noAddressOfFamily(name, ips, destination); })();
  if (packet) return { packets: [{ ...packet, source: sourceFor(packet.destination) }], node, pod: name };
  const svc = objects.services.find((s) => s.metadata.name === service && (s.metadata.namespace ?? "default") === namespace);
  if (!svc) throw new NotFoundError("service", service, namespace);
  const chosen = servicePacketsFromPod(svc, ips, name);
  if (chosen.length === 0) throw new UsageError(`--from-pod ${name}: Service ${namespace}/${service} has no ClusterIP and port to send to; give --dest IP:PORT[/proto]`);
  return { packets: chosen, node, pod: name };
}

/**
 * The keys of a targeted collection (targeted_script.ts): the addresses and ports at which one Service's packets
 * meet kube-proxy's dispatch chains (which are passed before DNAT, so endpoint addresses never key them).
 * Addresses: the Service's ClusterIPs, externalIPs and load-balancer IPs, the addresses of the node collected
 * (NodePorts answer on local addresses, and a node address can also be another Service's externalIP: see
 * {@link nodeTargetKeys}), and the packet question's addresses. Ports: the NodePorts and the health-check NodePort
 * (matched in KUBE-NODEPORTS and KUBE-EXTERNAL-SERVICES without an address), and the packet question's port.
 * The keys are a few dozen bytes whatever the size of the cluster.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "../bundle/bundle.ts";
import type { PacketQuestion } from "../model/question.ts";
import type { Node } from "../model/k8s.ts";
import type { TargetKeys } from "./targeted_script.ts";

/**
 * The targeted-collection keys of Service `namespace/name`.
 * @param objects the objects gathered for the question (the Service).
 * @param packets the packet questions, when one was asked (their sources, destinations and ports are keys too).
 * @returns addresses and ports (possibly empty when the Service is not among `objects`).
 */
export function serviceTargetKeys(objects: BundleObjects, namespace: string, name: string, packets: readonly PacketQuestion[] = []): TargetKeys {
  const addresses = new Set<string>();
  const ports = new Set<number>();
  const svc = objects.services.find((s) => s.metadata.name === name && (s.metadata.namespace ?? namespace) === namespace);
  if (svc) {
    for (const ip of [svc.spec.clusterIP, ...(svc.spec.clusterIPs ?? []), ...(svc.spec.externalIPs ?? [])]) if (ip && ip !== "None") addresses.add(ip);
    for (const ing of svc.status?.loadBalancer?.ingress ?? []) if (ing.ip) addresses.add(ing.ip);
    if (svc.spec.loadBalancerIP) addresses.add(svc.spec.loadBalancerIP);
    for (const p of svc.spec.ports ?? []) if (p.nodePort) ports.add(p.nodePort);
    if (svc.spec.healthCheckNodePort) ports.add(svc.spec.healthCheckNodePort);
  }
  for (const packet of packets) {
    if (packet.source) addresses.add(packet.source);
    addresses.add(packet.destination);
    ports.add(packet.port);
  }
  return { addresses, ports };
}

/**
 * The keys of one node's collection: the Service's keys and the node's own addresses (status.addresses).
 * @param keys from {@link serviceTargetKeys}.
 * @param node the Node collected.
 */
export function nodeTargetKeys(keys: TargetKeys, node: Node): TargetKeys {
  return { addresses: [...keys.addresses, ...(node.status?.addresses ?? []).map((a) => a.address)], ports: [...keys.ports] };
}

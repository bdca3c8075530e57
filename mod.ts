/**
 * kubectl-netpath library API: parsers of node datapath state (iptables, IPVS, ipset, nftables), the Bundle
 * model, and the analyses (service path, masquerade, drift, why-pending). Runtime-neutral: runs unchanged on
 * Node >= 20 and Deno 2.
 * @module
 */
export * from "./src/model/k8s.ts";
export * from "./src/bundle/bundle.ts";

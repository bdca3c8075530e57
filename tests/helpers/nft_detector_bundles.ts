// nftables-lab with the ruleset of one local-traffic detector (tests/fixtures/nftables/interface-detectors: kube-proxy's
// TestOverallNFTablesRules loaded into real nft, see its README), for the tests of nftables masquerade per detector.
import { readFileSync } from "node:fs";
import type { Bundle } from "../../src/bundle/bundle.ts";
import { readBundle } from "../../src/io/read_bundle.ts";
import { node } from "./bundles.ts";

/** The detectors the fixtures hold (`none`: kube-proxy without one). */
export type NftDetector = "ClusterCIDR" | "BridgeInterface" | "InterfaceNamePrefix" | "none";
/** The form the node's ruleset is read in: `nft -j list ruleset` or `nft list ruleset`. */
export type NftForm = "json" | "text";
const DIR = "tests/fixtures/nftables/interface-detectors";

const addr = (i: number, ifname: string, cidr: string) => `${i}: ${ifname}    inet ${cidr} scope global ${ifname}\\       valid_lft forever preferred_lft forever\n`;
/** A bridge CNI's node (`ip -o addr show`): eth0 holds the node's InternalIP, the bridge cni0 the pods' gateway on the node's podCIDR. */
export const BRIDGE_CNI = addr(1, "lo", "127.0.0.1/8") + addr(2, "eth0", "192.168.0.2/24") + addr(5, "cni0", "10.0.0.1/24");
/** A point-to-point CNI's node: each pod's host-side veth holds the gateway as a /32; no bridge. */
export const PTP_CNI = addr(1, "lo", "127.0.0.1/8") + addr(2, "eth0", "192.168.0.2/24") + addr(7, "veth1a2b3c4d", "10.0.0.1/32");

/**
 * nftables-lab (TestOverallNFTablesRules' Services and EndpointSlices, node test-node 192.168.0.2) with the ruleset of
 * `detector` as the node's nft -j or nft list output; test-node's podCIDR 10.0.0.0/24, another node n2's 10.0.1.0/24
 * (both inside the cluster CIDR 10.0.0.0/8).
 * @param addrs the node's `ip -o addr show` (default: the point-to-point CNI for InterfaceNamePrefix, else the bridge).
 * @param sysctls the node's sysctls section, when given.
 */
export function nftDetectorBundle(detector: NftDetector, form: NftForm, addrs = detector === "InterfaceNamePrefix" ? PTP_CNI : BRIDGE_CNI, sysctls?: string): Bundle {
  const b = structuredClone(readBundle("examples/nftables-lab"));
  const sections = b.nodes[0]!.sections;
  delete sections["nft-json"];
  const stdout = readFileSync(`${DIR}/${detector}.${form === "json" ? "json" : "nft.txt"}`, "utf8");
  if (form === "json") sections["nft-json"] = { command: "nft -j list ruleset", stdout, exitCode: 0 };
  else sections["nft-text"] = { command: "nft list ruleset", stdout, exitCode: 0 };
  sections["ip-addr"] = { command: "ip -o addr show", stdout: addrs, exitCode: 0 };
  if (sysctls !== undefined) sections.sysctls = { stdout: sysctls, exitCode: 0 };
  b.objects.nodes[0]!.spec = { podCIDR: "10.0.0.0/24", podCIDRs: ["10.0.0.0/24"] };
  b.objects.nodes.push({ ...node("n2", "192.168.0.3"), spec: { podCIDR: "10.0.1.0/24", podCIDRs: ["10.0.1.0/24"] } });
  return b;
}

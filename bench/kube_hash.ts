/**
 * Chain-name hashes exactly as kube-proxy computes them, so generated dumps carry the names a real node would have.
 *
 * - iptables mode (pkg/proxy/iptables/proxier.go `portProtoHash`, `servicePortEndpointChainName`):
 *   `KUBE-SVC-` / `KUBE-EXT-` / `KUBE-FW-` / `KUBE-SVL-` + base32(sha256(servicePortName + protocol))[:16];
 *   `KUBE-SEP-` + base32(sha256(servicePortName + protocol + "IP:port"))[:16]. e.g. `ns1/svc1:p80` + `tcp` →
 *   `XPGD46QRK7WJZT7O`, endpoint `10.180.0.1:80` → `SXIVWICOYRO3J4NJ` (tests/fixtures/kube-proxy).
 * - nftables mode (pkg/proxy/nftables/proxier.go `hashAndTruncate`): base32(sha256(name))[:8] + "-" + name, where
 *   name is `ns/svc/proto/port` (service chains) or `ns/svc/proto/port__IP/port` (endpoint chains), e.g.
 *   `ns1/svc1/tcp/p80` → `ULMVA6XW` (tests/fixtures/nftables).
 *
 * Bench code (not shipped): uses node:crypto.
 * @module
 */
import { createHash } from "node:crypto";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * RFC 4648 base32 (standard alphabet, no padding), as Go's `base32.StdEncoding` before its `=` padding.
 * @param bytes the data.
 * @returns the encoding, upper case.
 */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let value = 0;
  let bits = 0;
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function sha256Base32(text: string): string {
  return base32(createHash("sha256").update(text).digest());
}

/**
 * The 16-character hash of a ServicePort's iptables chains (`KUBE-SVC-<hash>`, also EXT/FW/SVL).
 * @param servicePortName `ns/name:port` (`ns/name` when the port has no name).
 * @param protocol lower case: `tcp`, `udp`, `sctp`.
 */
export function servicePortHash(servicePortName: string, protocol: string): string {
  return sha256Base32(servicePortName + protocol).slice(0, 16);
}

/**
 * The 16-character hash of an endpoint's `KUBE-SEP-<hash>` chain.
 * @param servicePortName `ns/name:port`.
 * @param protocol lower case.
 * @param endpoint `IP:port`.
 */
export function endpointHash(servicePortName: string, protocol: string, endpoint: string): string {
  return sha256Base32(servicePortName + protocol + endpoint).slice(0, 16);
}

/**
 * kube-proxy nftables `hashAndTruncate`: 8-character hash, `-`, the name. kube-proxy also truncates very long names
 * (near nft's 256-byte limit); the bench's names are far shorter, so that step is not reproduced.
 * @param name `ns/svc/proto/port` or `ns/svc/proto/port__IP/port`.
 * @returns e.g. `ULMVA6XW-ns1/svc1/tcp/p80`.
 */
export function nftChainBase(name: string): string {
  return `${sha256Base32(name).slice(0, 8)}-${name}`;
}

/**
 * Parsing of the positional target, as kubectl accepts it: `svc/NAME`, `service/NAME`, `services/NAME`,
 * `svc NAME`, and `pvc/NAME`, `persistentvolumeclaim/NAME`, `pod/NAME`, `po/NAME`.
 * Pure (no I/O); the CLI layer turns {@link UsageError} into exit code 2. Addresses are checked with node:net's isIP
 * (the CLI is an edge; the core uses src/model/ip.ts).
 * @module
 */
import { isIP } from "node:net";

import { UsageError } from "../model/errors.ts";
import type { Target, TargetKind } from "../model/question.ts";

export { UsageError };
export type { Target, TargetKind };

const ALIASES: Record<string, TargetKind> = {
  svc: "service",
  service: "service",
  services: "service",
  pvc: "pvc",
  persistentvolumeclaim: "pvc",
  persistentvolumeclaims: "pvc",
  pod: "pod",
  po: "pod",
  pods: "pod",
};

/** Target prefixes offered by completion. */
export const TARGET_PREFIXES = ["svc/", "service/", "pvc/", "pod/"];

/** RFC 1123 subdomain, the rule for Service/PVC/Pod names. */
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Parses the positional words into a target.
 * @param words `["svc/web"]` or `["svc", "web"]`.
 * @returns the target.
 * @throws {UsageError} for a missing, unknown or malformed target.
 */
export function parseTarget(words: string[]): Target {
  if (words.length === 0) {
    throw new UsageError("a target is required, e.g. `kubectl netpath svc/web` or `kubectl netpath pvc/data --why-pending`");
  }
  let type: string;
  let name: string | undefined;
  if (words[0]!.includes("/")) {
    if (words.length > 1) throw new UsageError(`unexpected argument "${words[1]}" after ${words[0]}: give one target`);
    const i = words[0]!.indexOf("/");
    type = words[0]!.slice(0, i);
    name = words[0]!.slice(i + 1);
  } else {
    if (words.length > 2) throw new UsageError(`unexpected argument "${words[2]}": give one target, e.g. svc/web`);
    type = words[0]!;
    name = words[1];
  }
  const kind = ALIASES[type.toLowerCase()];
  if (!kind) {
    throw new UsageError(`unknown target type "${type}": use svc/NAME, pvc/NAME or pod/NAME`);
  }
  if (name === undefined || name === "") throw new UsageError(`${type}: a name is required, e.g. ${type}/web`);
  if (!NAME.test(name) || name.length > 253) {
    throw new UsageError(`"${name}" is not a valid ${kind} name (lower-case letters, digits, '-' and '.')`);
  }
  return { kind, name };
}

/**
 * Parses `--dest IP:PORT[/tcp|udp|sctp]` (IPv6 as `[IP]:PORT`).
 * @throws {UsageError} when malformed.
 */
export function parseDest(text: string): { ip: string; port: number; protocol: "tcp" | "udp" | "sctp" } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})(?:\/(tcp|udp|sctp))?$/i.exec(text);
  if (!m) throw new UsageError(`--dest "${text}": want IP:PORT[/tcp|udp|sctp], e.g. 10.96.0.10:53/udp`);
  const port = Number(m[3]);
  const ip = (m[1] ?? m[2])!;
  if (m[1] !== undefined ? isIP(ip) !== 6 : isIP(ip) !== 4) {
    throw new UsageError(`--dest "${text}": ${ip} is not an ${m[1] !== undefined ? "IPv6" : "IPv4"} address; want IP:PORT[/tcp|udp|sctp], e.g. 10.96.0.10:53/udp or [fd00::10]:53/udp`);
  }
  if (port < 1 || port > 65535) throw new UsageError(`--dest "${text}": port ${port} is out of range 1-65535`);
  return { ip, port, protocol: (m[4]?.toLowerCase() ?? "tcp") as "tcp" | "udp" | "sctp" };
}

/**
 * Validates `--source IP`.
 * @throws {UsageError} when not an IPv4/IPv6 address.
 */
export function parseSource(text: string): string {
  // isIP accepts zone indices (fe80::1%eth0), which no packet carries: refuse them with the rest.
  if (isIP(text) !== 0 && !text.includes("%")) return text;
  const hint = /[:.]\d+$/.test(text) && isIP(text.replace(/:\d+$/, "")) === 4
    ? " (no port: --source is the client address only)"
    : text.includes("/") ? " (one address, not a CIDR)" : "";
  throw new UsageError(`--source "${text}": want an IPv4 or IPv6 address${hint}, e.g. 10.244.1.7 or fd00::7`);
}

/**
 * Validates `-n NAMESPACE`: an RFC 1123 label, as the API server requires of namespace names.
 * @throws {UsageError} when it cannot be a namespace name.
 */
export function parseNamespace(text: string): string {
  if (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(text) && text.length <= 63) return text;
  throw new UsageError(`-n "${text}" is not a valid namespace name (lower-case letters, digits and '-', at most 63)`);
}

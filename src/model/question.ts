/**
 * The questions kubectl-netpath answers, as plain data shared by the edges (kube/, cli/) and the analyses
 * (service/, pending/): which object is asked about, and the packets a `--source/--dest` or `--from-pod` question traces.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** The kinds of object a question names. */
export type TargetKind = "service" | "pvc" | "pod";

/** The object a question names: `svc/web` is `{ kind: "service", name: "web" }`. */
export interface Target {
  kind: TargetKind;
  name: string;
}

/** A packet question: `--source IP --dest IP:PORT[/proto]`. Addresses are literal IPv4 or IPv6 (no brackets). */
export interface PacketQuestion {
  source: string;
  destination: string;
  /** Destination port, 1-65535. */
  port: number;
  protocol: "tcp" | "udp" | "sctp";
}

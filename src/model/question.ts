/**
 * The questions kubectl-netpath answers, as plain data shared by the edges (kube/, cli/) and the analyses
 * (service/, pending/): which object is asked about, and the one packet a `--source/--dest` question traces.
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
  /**
   * For a packet the tool chose (`--from-pod` without `--dest`: the Service's first port at `spec.clusterIP`), the
   * Service's other destinations the client could send to, as `IP:PORT/proto` (`[IPv6]:PORT/proto`): its other
   * ServicePorts, and each port at the ClusterIP of its other family. Not traced; the answer names them.
   */
  untraced?: string[];
}

/**
 * Parser of `ipvsadm -Ln` output: the IPVS virtual servers kube-proxy programs in IPVS mode, with their scheduler,
 * persistence and real servers.
 *
 * Accepts every listing layout ipvsadm prints (ipvsadm.c `print_title` / `print_service_entry`, v1.26–v1.31):
 * the default columns (`-Ln`, `-ln`, `--exact`), `--stats`, `--rate`, `--thresholds`, `--persistent-conn` and
 * `--tun-info`, with or without the `IP Virtual Server version …` header (absent when one service is listed with
 * `-t`/`-u`/`-f`). The layout is taken from the column titles; without titles the default layout is assumed.
 *
 * The parser is a state machine over lines: header → column titles → (virtual server line → real server lines)*.
 * Every virtual server and real server keeps its raw text and 1-based line number. Lines it does not recognise in
 * an otherwise valid listing (shell prompts, comments, unknown protocols) are reported in `unparsed`, never dropped.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { DumpParseError } from "./errors.ts";

const FORMAT = "ipvsadm";

/**
 * The IPVS schedulers ipvsadm knows (ipvsadm(8), kernel net/netfilter/ipvs/ip_vs_*.c). kube-proxy's `--ipvs-scheduler`
 * defaults to `rr`. A listing may name another (out-of-tree) scheduler; the parser keeps it as printed.
 */
export const IPVS_SCHEDULERS = [
  "rr",
  "wrr",
  "lc",
  "wlc",
  "lblc",
  "lblcr",
  "dh",
  "sh",
  "sed",
  "nq",
  "mh",
  "fo",
  "ovf",
  "twos",
] as const;

/** Which columns the listing has, from its title lines (`ipvsadm -Ln [--stats|--rate|--thresholds|…]`). */
export type IpvsColumns = "default" | "tun-info" | "stats" | "rate" | "thresholds" | "persistent-conn";

/**
 * Counters of a virtual or real server, from `--stats` (totals since the counters were zeroed) or `--rate`
 * (per-second estimates). Without `--exact`, ipvsadm abbreviates values of 10^8 and more as `123K`, `45M`, `6G`,
 * `7T` (the value divided by 10^3, 10^6, 10^9, 10^12, rounded down); such values are expanded (`123K` → 123000) and
 * `approximate` is true.
 */
export type IpvsStats =
  | {
    kind: "stats";
    /** Connections scheduled. */
    conns: number;
    /** Packets in / out. */
    inPkts: number;
    outPkts: number;
    /** Bytes in / out. */
    inBytes: number;
    outBytes: number;
    approximate: boolean;
  }
  | {
    kind: "rate";
    /** Connections per second. */
    cps: number;
    /** Packets per second in / out. */
    inPps: number;
    outPps: number;
    /** Bytes per second in / out. */
    inBps: number;
    outBps: number;
    approximate: boolean;
  };

/**
 * A real server (an endpoint: pod IP and target port) of a virtual server:
 * `  -> 10.244.1.6:80                Masq    1      0          0`.
 * Columns absent from the listing's layout are `undefined` (e.g. `forward` and `weight` under `--stats`).
 */
export interface RealServer {
  /** IP address, without brackets for IPv6 (`fd00::1`). */
  address: string;
  /** Port; 0 for the real servers of a firewall-mark virtual server. */
  port: number;
  family: "inet" | "inet6";
  /** Forwarding method: `Masq` (NAT, what kube-proxy uses), `Route` (direct routing), `Tunnel`, `Local`. */
  forward?: "Masq" | "Route" | "Tunnel" | "Local" | string;
  /** `--tun-info` column: `ipip`, `gue:PORT:FLAGS` (flags `-c`, `+c`, `r+c`), or `n/a` when not tunnelled. */
  tunnelInfo?: string;
  /** Scheduling weight; 0 means quiesced (no new connections), which kube-proxy uses for terminating endpoints. */
  weight?: number;
  /** Connections in ESTABLISHED state (TCP) — what lc/wlc/sed/nq schedulers compare. */
  activeConn?: number;
  /** Connections in other states, and UDP entries. */
  inactiveConn?: number;
  /** `--persistent-conn`: persistence templates pointing at this real server. */
  persistConn?: number;
  /** `--thresholds`: upper / lower connection thresholds (0 = none). */
  upperThreshold?: number;
  lowerThreshold?: number;
  stats?: IpvsStats;
  /** 1-based line number and text of the real server line. */
  line: number;
  raw: string;
}

/**
 * A virtual server: one ClusterIP/NodePort/LoadBalancer/externalIP address and port (or firewall mark) that IPVS
 * load-balances: `TCP  10.0.0.1:443 rr persistent 10800`.
 */
export interface VirtualServer {
  protocol: "TCP" | "UDP" | "SCTP" | "FWM";
  family: "inet" | "inet6";
  /** IP address (without brackets) and port; undefined for a firewall-mark (FWM) virtual server. */
  address?: string;
  port?: number;
  /** Firewall mark, for `FWM  <mark>` virtual servers. */
  fwmark?: number;
  /** Scheduler name (see {@link IPVS_SCHEDULERS}); undefined under `--stats` / `--rate`, which do not print it. */
  scheduler?: string;
  /**
   * Persistence (`persistent <seconds> [mask <netmask>] [pe <engine>]`): kube-proxy sets it for
   * `sessionAffinity: ClientIP` with `timeoutSeconds` (default 10800).
   */
  persistent?: { timeoutSeconds: number; netmask?: string; persistenceEngine?: string };
  /**
   * Service flags: `ops` (one-packet scheduling), and scheduler flags printed in parentheses after the scheduler
   * (`sh-fallback`, `sh-port`, `mh-fallback`, `mh-port`, `flag-1`…`flag-3`). Unknown words are kept here too, and
   * also reported in {@link IpvsTable.unparsed}.
   */
  flags: string[];
  realServers: RealServer[];
  stats?: IpvsStats;
  /** 1-based line number and text of the virtual server line. */
  line: number;
  raw: string;
}

/** A parsed `ipvsadm -Ln` listing. */
export interface IpvsTable {
  /** IPVS version from the header (`1.2.1`), when the header is present. */
  version?: string;
  /** Connection hash table size from the header (`size=4096`). */
  size?: number;
  /** Layout of the listing, from its column titles (`default` when it has none). */
  columns: IpvsColumns;
  virtualServers: VirtualServer[];
  /** Lines not understood, with why; they are reported, never silently dropped. */
  unparsed: { line: number; text: string; reason: string }[];
}

/** Column titles of the real server line for each layout (second title line, after `-> RemoteAddress:Port`). */
const REAL_SERVER_COLUMNS: Record<IpvsColumns, string> = {
  "default": "Forward Weight ActiveConn InActConn",
  "tun-info": "Forward TunnelInfo Weight ActiveConn InActConn",
  "stats": "Conns InPkts OutPkts InBytes OutBytes",
  "rate": "CPS InPPS OutPPS InBPS OutBPS",
  "thresholds": "Uthreshold Lthreshold ActiveConn InActConn",
  "persistent-conn": "Weight PersistConn ActiveConn InActConn",
};

const HEADER_RE = /^IP Virtual Server version (\S+) \(size=(\d+)\)$/;
const TITLE_RE = /^Prot LocalAddress:Port\s+(.*)$/;
const TITLE2_RE = /^->\s+RemoteAddress:Port(?:\s+(.*))?$/;
const SERVICE_RE = /^(TCP|UDP|SCTP)\s+(\S+)(?:\s+(.*))?$/;
const FWM_RE = /^FWM\s+(\S+)(\s+IPv6)?(?:\s+(.*))?$/;
const REAL_RE = /^->\s*(\S+)(?:\s+(.*))?$/;
/** A line that looks like a virtual server of a protocol this parser does not know (`ICMP  …`, `IP  …`). */
const OTHER_SERVICE_RE = /^[A-Z][A-Z0-9]*\s+\S+:\S+/;
const INT_RE = /^\d+$/;
const LARGENUM_RE = /^(\d+)([KMGT])?$/;
const IPV4_RE = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_RE = /^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;
const KNOWN_FLAGS = new Set(["ops", "sh-fallback", "sh-port", "mh-fallback", "mh-port", "flag-1", "flag-2", "flag-3"]);

/**
 * Parses the output of `ipvsadm -Ln` (also `-ln`, `--exact`, `--stats`, `--rate`, `--thresholds`,
 * `--persistent-conn`, `--tun-info`).
 *
 * Layout as printed by ipvsadm.c (`list_all` → `print_title` → `print_service_entry`), v1.26 to v1.31:
 * `TCP  10.96.0.10:53 rr`, `FWM  100 IPv6 wrr`, `UDP  [fd00::a]:53 sh (sh-fallback,sh-port) persistent 360 mask 64`,
 * `  -> 10.244.0.3:53                Masq    1      0          8`.
 *
 * @param text the command's standard output.
 * @returns the virtual servers in listing order, each with its real servers, and the lines not understood.
 * @throws {DumpParseError} when the input is empty or binary; when it is not an ipvsadm listing (its first line is
 *   neither the version header, the column titles nor a virtual server); when a real server line comes before any
 *   virtual server; when a virtual or real server line is malformed or cut short (missing columns, non-numeric
 *   address — list with `-n`); when the listing stops after the header or the first title line.
 * @example
 * ```ts
 * import { parseIpvsadm } from "./ipvsadm.ts";
 * const table = parseIpvsadm("TCP  10.96.0.10:53 rr\n  -> 10.244.0.3:53 Masq 1 0 0\n");
 * table.virtualServers[0]?.realServers[0]?.address; // "10.244.0.3"
 * ```
 */
export function parseIpvsadm(text: string): IpvsTable {
  // `ipvsadm -S -n` (save) output: rules as ipvsadm commands
  if (/^\s*-A\s/.test(text.split("\n").find((l) => l.trim() !== "" && !l.trim().startsWith("#")) ?? "")) return parseIpvsadmSave(text);
  const lines = text.split("\n");
  const table: IpvsTable = { columns: "default", virtualServers: [], unparsed: [] };
  if (text.trim() === "") {
    throw new DumpParseError(FORMAT, 0, `empty input, expected "ipvsadm -Ln" output`, "");
  }

  /** What the parser has seen: nothing yet, the header, the first title line, or the full titles. */
  let stage: "start" | "header" | "title1" | "body" = "start";
  /** The current virtual server; `null` while inside an unparsed virtual server (its real servers are skipped). */
  let current: VirtualServer | null | undefined;
  let lastLine = 0;
  let lastText = "";

  for (const { lineNo, raw, t } of textLines(lines)) {
    lastLine = lineNo;
    lastText = raw;

    if (t.startsWith("#") || t.startsWith("$ ")) {
      table.unparsed.push({ line: lineNo, text: raw, reason: "comment or shell prompt" });
      continue;
    }

    let m = HEADER_RE.exec(t);
    if (m) {
      table.version = m[1];
      table.size = Number(m[2]);
      stage = "header";
      continue;
    }

    m = TITLE_RE.exec(t);
    if (m) {
      table.columns = columnsFromTitle(m[1] ?? "", lineNo, raw);
      stage = "title1";
      continue;
    }

    m = TITLE2_RE.exec(t);
    if (m) {
      if (stage !== "title1") {
        throw new DumpParseError(FORMAT, lineNo, `"-> RemoteAddress:Port" title without the "Prot LocalAddress:Port" title line`, raw);
      }
      if ((m[1] ?? "").includes("TunnelInfo")) table.columns = "tun-info";
      stage = "body";
      continue;
    }

    if (stage === "header") {
      throw new DumpParseError(FORMAT, lineNo, `expected the "Prot LocalAddress:Port …" column titles after the version header`, raw);
    }
    if (stage === "title1") {
      throw new DumpParseError(FORMAT, lineNo, `expected the "  -> RemoteAddress:Port …" title line`, raw);
    }

    if (t.startsWith("->")) {
      if (current === undefined) {
        throw new DumpParseError(FORMAT, lineNo, "real server line before any virtual server (dump cut at the start?)", raw);
      }
      if (current === null) {
        table.unparsed.push({ line: lineNo, text: raw, reason: "real server of a virtual server that was not understood" });
        continue;
      }
      current.realServers.push(parseRealServer(t, table.columns, lineNo, raw));
      stage = "body";
      continue;
    }

    if (SERVICE_RE.test(t) || FWM_RE.test(t)) {
      current = parseVirtualServer(t, table, lineNo, raw);
      table.virtualServers.push(current);
      stage = "body";
      continue;
    }

    if (stage === "start") {
      throw new DumpParseError(FORMAT, lineNo, `expected "IP Virtual Server version …", the column titles or a virtual server line`, raw);
    }
    if (OTHER_SERVICE_RE.test(t)) {
      table.unparsed.push({ line: lineNo, text: raw, reason: "virtual server of an unknown protocol" });
      current = null;
      continue;
    }
    table.unparsed.push({ line: lineNo, text: raw, reason: "not an ipvsadm listing line" });
  }

  if (stage === "header") {
    throw new DumpParseError(FORMAT, lastLine, "listing ends after the version header (expected the column titles)", lastText);
  }
  if (stage === "title1") {
    throw new DumpParseError(FORMAT, lastLine, `listing ends after the first title line (expected "  -> RemoteAddress:Port …")`, lastText);
  }
  return table;
}

/** Rejects NUL bytes and other control characters: a binary file, or a stream that is not text. */
/** The non-blank lines of a dump: 1-based number, text without `\r`, trimmed text; binary data is an error. */
function* textLines(lines: string[]): Generator<{ lineNo: number; raw: string; t: string }> {
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? "").replace(/\r$/, "");
    assertText(raw, i + 1);
    const t = raw.trim();
    if (t !== "") yield { lineNo: i + 1, raw, t };
  }
}

function assertText(raw: string, lineNo: number): void {
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(raw)) {
    throw new DumpParseError(FORMAT, lineNo, "binary data, expected ipvsadm text output", raw);
  }
}

function columnsFromTitle(rest: string, lineNo: number, raw: string): IpvsColumns {
  const words = rest.trim().split(/\s+/).join(" ");
  if (words === "Scheduler Flags") return "default";
  for (const [layout, cols] of Object.entries(REAL_SERVER_COLUMNS) as [IpvsColumns, string][]) {
    if (layout !== "default" && layout !== "tun-info" && words === cols) return layout;
  }
  throw new DumpParseError(FORMAT, lineNo, `unknown column titles "${words}"`, raw);
}

/** `10.0.0.1:443` or `[fd00::1]:443` → address, port, family. */
function parseAddressPort(
  s: string,
  what: string,
  lineNo: number,
  raw: string,
): { address: string; port: number; family: "inet" | "inet6" } {
  let address: string | undefined;
  let port: string | undefined;
  let family: "inet" | "inet6" = "inet";
  const v6 = /^\[([^\]]*)\]:(.*)$/.exec(s);
  if (v6) {
    address = v6[1];
    port = v6[2];
    family = "inet6";
    if (address === undefined || !IPV6_RE.test(address)) address = undefined;
  } else {
    const colon = s.lastIndexOf(":");
    if (colon > 0) {
      address = s.slice(0, colon);
      port = s.slice(colon + 1);
      if (!IPV4_RE.test(address)) address = undefined;
    }
  }
  if (address === undefined || port === undefined || !INT_RE.test(port) || Number(port) > 65535) {
    throw new DumpParseError(
      FORMAT,
      lineNo,
      `${what}: expected a numeric ADDRESS:PORT or [IPv6]:PORT, got "${s}" (list with -n; dump cut mid-line?)`,
      raw,
    );
  }
  return { address, port: Number(port), family };
}

function parseVirtualServer(t: string, table: IpvsTable, lineNo: number, raw: string): VirtualServer {
  let vs: VirtualServer;
  let rest: string;
  const fwm = FWM_RE.exec(t);
  if (fwm) {
    const mark = fwm[1] ?? "";
    if (!INT_RE.test(mark)) {
      throw new DumpParseError(FORMAT, lineNo, `virtual server: expected a numeric firewall mark, got "${mark}"`, raw);
    }
    vs = {
      protocol: "FWM",
      family: fwm[2] ? "inet6" : "inet",
      fwmark: Number(mark),
      flags: [],
      realServers: [],
      line: lineNo,
      raw,
    };
    rest = fwm[3] ?? "";
  } else {
    const m = SERVICE_RE.exec(t) as RegExpExecArray;
    const ap = parseAddressPort(m[2] ?? "", "virtual server", lineNo, raw);
    vs = {
      protocol: m[1] as "TCP" | "UDP" | "SCTP",
      family: ap.family,
      address: ap.address,
      port: ap.port,
      flags: [],
      realServers: [],
      line: lineNo,
      raw,
    };
    rest = m[3] ?? "";
  }
  const words = rest.split(/\s+/).filter((w) => w !== "");

  if (table.columns === "stats" || table.columns === "rate") {
    vs.stats = parseStats(words, table.columns, "virtual server", lineNo, raw);
    return vs;
  }

  const scheduler = words.shift();
  if (scheduler === undefined) {
    throw new DumpParseError(FORMAT, lineNo, "virtual server: expected a scheduler after the address (dump cut mid-line?)", raw);
  }
  vs.scheduler = scheduler;
  while (words.length > 0) {
    const w = words.shift() as string;
    if (w.startsWith("(") && w.endsWith(")")) {
      // Scheduler flags, `(sh-fallback,sh-port)` (ipvsadm.c print_sched_flags).
      for (const f of w.slice(1, -1).split(",")) if (f !== "") addFlag(vs, f, table, lineNo, raw);
    } else if (w === "persistent") {
      const secs = words.shift();
      if (secs === undefined || !INT_RE.test(secs)) {
        throw new DumpParseError(FORMAT, lineNo, `virtual server: "persistent" needs a timeout in seconds`, raw);
      }
      vs.persistent = { timeoutSeconds: Number(secs) };
    } else if ((w === "mask" || w === "pe") && vs.persistent) {
      const v = words.shift();
      if (v === undefined) throw new DumpParseError(FORMAT, lineNo, `virtual server: "${w}" needs a value`, raw);
      if (w === "mask") vs.persistent.netmask = v;
      else vs.persistent.persistenceEngine = v;
    } else {
      addFlag(vs, w, table, lineNo, raw);
    }
  }
  return vs;
}

function addFlag(vs: VirtualServer, flag: string, table: IpvsTable, lineNo: number, raw: string): void {
  vs.flags.push(flag);
  if (!KNOWN_FLAGS.has(flag)) {
    table.unparsed.push({ line: lineNo, text: raw, reason: `unknown virtual server flag "${flag}"` });
  }
}

function parseRealServer(t: string, columns: IpvsColumns, lineNo: number, raw: string): RealServer {
  const m = REAL_RE.exec(t) as RegExpExecArray;
  const ap = parseAddressPort(m[1] ?? "", "real server", lineNo, raw);
  const words = (m[2] ?? "").split(/\s+/).filter((w) => w !== "");
  const rs: RealServer = { address: ap.address, port: ap.port, family: ap.family, line: lineNo, raw };
  const expected = REAL_SERVER_COLUMNS[columns];
  const want = expected.split(" ").length;
  const fail = (): never => {
    throw new DumpParseError(FORMAT, lineNo, `real server: expected columns "${expected}" after the address`, raw);
  };
  if (columns === "stats" || columns === "rate") {
    rs.stats = parseStats(words, columns, "real server", lineNo, raw);
    return rs;
  }
  if (words.length !== want) fail();
  const ints = (from: number): number[] =>
    words.slice(from).map((w) => {
      if (!/^-?\d+$/.test(w)) fail();
      return Number(w);
    });
  switch (columns) {
    case "default": {
      rs.forward = words[0];
      [rs.weight, rs.activeConn, rs.inactiveConn] = ints(1);
      break;
    }
    case "tun-info": {
      rs.forward = words[0];
      rs.tunnelInfo = words[1];
      [rs.weight, rs.activeConn, rs.inactiveConn] = ints(2);
      break;
    }
    case "thresholds": {
      [rs.upperThreshold, rs.lowerThreshold, rs.activeConn, rs.inactiveConn] = ints(0);
      break;
    }
    case "persistent-conn": {
      [rs.weight, rs.persistConn, rs.activeConn, rs.inactiveConn] = ints(0);
      break;
    }
  }
  return rs;
}

const SUFFIX: Record<string, number> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };

function parseStats(
  words: string[],
  kind: "stats" | "rate",
  what: string,
  lineNo: number,
  raw: string,
): IpvsStats {
  if (words.length !== 5) {
    throw new DumpParseError(FORMAT, lineNo, `${what}: expected 5 counters "${REAL_SERVER_COLUMNS[kind]}"`, raw);
  }
  let approximate = false;
  const v = words.map((w) => {
    const m = LARGENUM_RE.exec(w);
    if (!m) throw new DumpParseError(FORMAT, lineNo, `${what}: counter "${w}" is not a number`, raw);
    if (m[2]) approximate = true;
    return Number(m[1]) * (m[2] ? SUFFIX[m[2]] as number : 1);
  }) as [number, number, number, number, number];
  return kind === "stats"
    ? { kind, conns: v[0], inPkts: v[1], outPkts: v[2], inBytes: v[3], outBytes: v[4], approximate }
    : { kind, cps: v[0], inPps: v[1], outPps: v[2], inBps: v[3], outBps: v[4], approximate };
}

/** Protocol options of `ipvsadm -S` lines. */
const SAVE_PROTOCOLS: Record<string, VirtualServer["protocol"]> = { "-t": "TCP", "--tcp-service": "TCP", "-u": "UDP", "--udp-service": "UDP", "--sctp-service": "SCTP", "-f": "FWM", "--fwmark-service": "FWM" };
const SAVE_FORWARD: Record<string, RealServer["forward"]> = { "-m": "Masq", "--masquerading": "Masq", "-g": "Route", "--gatewaying": "Route", "-i": "Tunnel", "--ipip": "Tunnel" };

/**
 * Parses `ipvsadm -S -n` (save) output: `-A -t 10.96.0.10:53 -s rr [-p 10800]` per virtual server, then
 * `-a -t 10.96.0.10:53 -r 10.244.0.3:53 -m -w 1` per real server (ipvsadm.c `print_service_entry` with FMT_RULE).
 * It holds no connection counts: `activeConn`/`inactiveConn` stay undefined. Options not understood are reported in
 * `unparsed`.
 * @throws {DumpParseError} for a real server before its virtual server, or an address that is not numeric.
 */
export function parseIpvsadmSave(text: string): IpvsTable {
  const table: IpvsTable = { columns: "default", virtualServers: [], unparsed: [] };
  const byKey = new Map<string, VirtualServer>();
  for (const { lineNo, raw, t } of textLines(text.split("\n"))) {
    if (t.startsWith("#")) {
      table.unparsed.push({ line: lineNo, text: raw, reason: "comment" });
      continue;
    }
    const words = t.split(/\s+/);
    const cmd = words[0];
    if (cmd !== "-A" && cmd !== "-a") throw new DumpParseError(FORMAT, lineNo, `expected an "ipvsadm -S" line (-A or -a), got "${cmd}"`, raw);
    const protoAt = words.findIndex((w) => SAVE_PROTOCOLS[w] !== undefined);
    const protocol = protoAt === -1 ? undefined : SAVE_PROTOCOLS[words[protoAt]!];
    const target = protoAt === -1 ? undefined : words[protoAt + 1];
    if (!protocol || target === undefined) throw new DumpParseError(FORMAT, lineNo, "no -t, -u, --sctp-service or -f service", raw);
    const option = (...names: string[]) => {
      const at = words.findIndex((w) => names.includes(w));
      return at === -1 ? undefined : words[at + 1] ?? "";
    };
    const unknown = words.slice(1).filter((w, k, all) => w.startsWith("-") && SAVE_PROTOCOLS[w] === undefined && SAVE_FORWARD[w] === undefined &&
      !["-s", "--scheduler", "-p", "--persistent", "-M", "--netmask", "-r", "--real-server", "-w", "--weight", "-x", "--u-threshold", "-y", "--l-threshold", "-o", "--ops", "-b", "--sched-flags"].includes(w) && !/^\d+$/.test(all[k - 1] ?? ""));
    for (const w of unknown) table.unparsed.push({ line: lineNo, text: raw, reason: `option ${w} not read` });
    if (cmd === "-A") {
      const vs: VirtualServer = { protocol, family: "inet", flags: [], realServers: [], line: lineNo, raw };
      if (protocol === "FWM") vs.fwmark = Number(target);
      else Object.assign(vs, parseAddressPort(target, "virtual server", lineNo, raw));
      const sched = option("-s", "--scheduler");
      if (sched) vs.scheduler = sched;
      const p = option("-p", "--persistent");
      if (p !== undefined) {
        vs.persistent = { timeoutSeconds: /^\d+$/.test(p) ? Number(p) : 300 };
        const mask = option("-M", "--netmask");
        if (mask) vs.persistent.netmask = mask;
      }
      if (words.includes("-o") || words.includes("--ops")) vs.flags.push("ops");
      const flags = option("-b", "--sched-flags");
      if (flags) vs.flags.push(...flags.split(","));
      table.virtualServers.push(vs);
      byKey.set(`${protocol} ${target}`, vs);
    } else {
      const vs = byKey.get(`${protocol} ${target}`);
      if (!vs) throw new DumpParseError(FORMAT, lineNo, `real server of ${target}, which no -A line before it adds`, raw);
      const r = option("-r", "--real-server");
      if (r === undefined) throw new DumpParseError(FORMAT, lineNo, "real server line without -r", raw);
      const rs: RealServer = { ...(r.includes(":") ? parseAddressPort(r, "real server", lineNo, raw) : { address: r, port: 0, family: "inet" as const }), line: lineNo, raw };
      const fwd = words.find((w) => SAVE_FORWARD[w] !== undefined);
      rs.forward = fwd ? SAVE_FORWARD[fwd] : "Route";
      const w = option("-w", "--weight");
      rs.weight = w !== undefined && /^\d+$/.test(w) ? Number(w) : 1;
      vs.realServers.push(rs);
    }
  }
  if (table.virtualServers.length === 0) throw new DumpParseError(FORMAT, 0, "no virtual server in this ipvsadm -S output", "");
  return table;
}

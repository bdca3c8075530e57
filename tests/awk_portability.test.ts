// The targeted collection's awk program (src/kube/rule_select_awk.ts) runs with whatever awk the node image has:
// (and without awk, kube-proxy's own image, the chain walk's filter in sh builtins, src/kube/rule_select_sh.ts, must
// decide as the awk program does: compared below under dash, bash and busybox sh)
// mawk (Debian, Ubuntu), gawk (RHEL-family hosts, reached with --profile sysadmin through chroot /host), busybox awk
// (Alpine images such as netshoot). Each must select the same rules. Found by this test: the program once named an
// array `RT`, gawk's record-terminator variable, and gawk refused to run it at all ("split: second argument is not an
// array"), so every targeted collection on a gawk image failed.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { AWK_SELECT, KUBE_PROXY_ROOTS } from "../src/kube/rule_select_awk.ts";
import { SH_CHAIN_AWK, SH_CHAIN_FILTER, SH_SAVE_FILTER } from "../src/kube/rule_select_sh.ts";
import { requireTools } from "./helpers/netns.ts";
import { keyWords, realDumps, selectSave } from "./helpers/targeted_selection.ts";

const AWKS: readonly (readonly string[])[] = [["mawk"], ["gawk"], ["busybox", "awk"]];
const HAVE = requireTools("awk implementations (mawk, gawk, busybox awk)", ["mawk", "gawk", "busybox"]);
const SHELLS: readonly (readonly string[])[] = [["dash"], ["bash"], ["busybox", "sh"]];
const HAVE_SHELLS = requireTools("shells (dash, bash, busybox sh)", ["dash", "bash", "busybox"]);

/** A save with a policy chain with counters, a chain in two runs, a rule without a spec, an undeclared chain. */
const SAVE = `*nat
:PREROUTING ACCEPT [5:300]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-A - [0:0]
:KUBE-SVC-B - [0:0]
:KUBE-SEP-A1 - [0:0]
:UNUSED - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-A
-A KUBE-SERVICES -d 10.0.0.2/32 -p tcp -m comment --comment "ns/b:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-B
-A KUBE-SVC-A -j KUBE-SEP-A1
-A OUTPUT -j KUBE-SERVICES
-A KUBE-SEP-A1 -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:80
-A GHOST -j ACCEPT
-A KUBE-SVC-A
-A KUBE-SVC-A -j RETURN
COMMIT
*filter
:INPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
-A KUBE-SERVICES -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j REJECT
COMMIT
`;

/** What the selection keeps of {@link SAVE} for 10.0.0.1:80: the chains in declaration order, each one's rules. */
const SELECTED = `*nat
:PREROUTING ACCEPT [5:300]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-A - [0:0]
:KUBE-SEP-A1 - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A OUTPUT -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-A
-A KUBE-SVC-A -j KUBE-SEP-A1
-A KUBE-SVC-A
-A KUBE-SVC-A -j RETURN
-A KUBE-SEP-A1 -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:80
COMMIT
*filter
:INPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
COMMIT
`;

/** `iptables -t TABLE -S CHAIN` of one chain of a save (what the nft backend's chain walk filters). */
function listing(save: string, table: string, chain: string): string {
  const out: string[] = [];
  let t = "";
  for (const line of save.split("\n")) {
    if (line.startsWith("*")) t = line.slice(1);
    if (t !== table) continue;
    const decl = /^:(\S+) (\S+)/.exec(line);
    if (decl?.[1] === chain) out.push(decl[2] === "-" ? `-N ${chain}` : `-P ${chain} ${decl[2]}`);
    if (line.startsWith(`-A ${chain} `)) out.push(line);
  }
  return out.join("\n") + "\n";
}

function selectChain(text: string, table: string, keys: string, awk: readonly string[]): string {
  const r = spawnSync(awk[0]!, [...awk.slice(1), AWK_SELECT], { input: text, env: { NP_MODE: "chain", NP_TABLE: table, NP_KEYS: keys, PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  if (r.status !== 0) throw new Error(`${awk.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

describe.runIf(HAVE)("the targeted selection under mawk, gawk and busybox awk", () => {
  for (const awk of AWKS) {
    it(`${awk.join(" ")}: a hand-made save, the exact selection`, () => {
      expect(selectSave(SAVE, "ip:10.0.0.1 port:80", awk)).toBe(SELECTED);
    });
  }

  it("every Service of the real dumps in node format: the same save selection and chain listings under each awk", () => {
    const dumps = realDumps();
    expect(dumps.length).toBeGreaterThan(40);
    let services = 0;
    for (const { file: f, text, bundle } of dumps) {
      for (const s of bundle.objects.services) {
        services++;
        const keys = keyWords(bundle.objects, s.metadata.namespace!, s.metadata.name, "node-1");
        const what = `${f}: ${s.metadata.namespace}/${s.metadata.name}`;
        const saves = AWKS.map((awk) => selectSave(text, keys, awk));
        expect(saves[0], what).toContain(s.spec.clusterIP!);
        for (let i = 1; i < AWKS.length; i++) expect(saves[i], `${what} (${AWKS[i]!.join(" ")})`).toBe(saves[0]);
        for (const [table, chain] of [["nat", "KUBE-SERVICES"], ["nat", "KUBE-NODEPORTS"], ["nat", "POSTROUTING"], ["filter", "KUBE-SERVICES"]] as const) {
          const input = listing(text, table, chain);
          const lists = AWKS.map((awk) => selectChain(input, table, keys, awk));
          for (let i = 1; i < AWKS.length; i++) expect(lists[i], `${what}, ${table} ${chain} (${AWKS[i]!.join(" ")})`).toBe(lists[0]);
        }
      }
    }
    expect(services).toBeGreaterThan(80);
  }, 120_000);
});

/**
 * A script that reads blocks of listings (`### TABLE CHAIN` then the chain's `iptables -S` lines) on stdin and prints,
 * per block, the declarations, rules and jump targets the walk gathers from it: with the sh filter (`cf`) or the awk
 * program (`ca`), the two functions the targeted script's walk calls.
 */
function walkHarness(filter: "sh" | "awk"): string {
  const run = filter === "sh" ? "cf $1" : "ca $1";
  return `set -f
NL='
'
${filter === "sh" ? SH_CHAIN_FILTER : SH_CHAIN_AWK}
one() {
${run}
}
flush() { if [ -n "$t" ]; then D=; R=; q=; one "$t"; printf '### %s %s\\nD:\\n%sR:\\n%sF:%s\\n' "$t" "$c" "$D" "$R" "$q"; fi; }
all=$(cat)
IFS=$NL; set -- $all; IFS=' 	
'
t=; c=; o=
for l do case $l in "### "*) h=$l; flush; h=\${h#"### "}; t=\${h%% *}; c=\${h#* }; o= ;; *) o="$o$l$NL" ;; esac; done
flush
`;
}

describe.runIf(HAVE && HAVE_SHELLS)("the chain walk's filter without awk (sh builtins) decides as the awk program", () => {
  /** Rules of the shapes the real dumps lack, in each dispatch chain and in a chain kept whole. */
  const SHAPES = [
    '-A C -d 10.0.0.9/32 -p tcp -m comment --comment "ns/other:p cluster IP" -m tcp --dport 80 -j KUBE-SVC-OTHER',
    '-A C -d 10.0.0.1/32 -p tcp -m comment --comment "ns/a:p cluster IP" -m tcp --dport 80 -j KUBE-SVC-A',
    '-A C -d 10.0.0.2/32 -p tcp -m tcp --dport 81 -j KUBE-SVC-B',
    "-A C ! -d 10.0.0.3/32 -j KUBE-MARK-MASQ",
    "-A C -d 10.1.0.0/16 -j KUBE-NET",
    "-A C -d 10.0.0.1 -j KUBE-NOMASK-KEY",
    "-A C -d 10.0.0.4 -j KUBE-NOMASK-OTHER",
    "-A C -p tcp -m tcp --dport 30000:30100 -j KUBE-RANGE",
    "-A C -p tcp -m multiport --dports 80,443 -j KUBE-MULTI",
    "-A C -p tcp -m tcp --dport 30500 -g KUBE-GOTO-KEY",
    "-A C -p tcp -m tcp --dport 30501 -j KUBE-PORT-OTHER",
    '-A C -m comment --comment "a \\"quoted\\" -j FAKE -d 10.0.0.1/32" -j KUBE-QUOTED',
    '-A C -m comment --comment "unterminated -j KUBE-UNTERMINATED',
    '-A C -m comment --comment "ends in a backslash\\',
    "-A C -j",
    "-A C",
    "-A C -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS",
  ];

  it("hand-made rules of every shape the filter reads: the same decisions as the awk program under each shell", () => {
    const input = [["nat", "KUBE-SERVICES", "-N"], ["nat", "KUBE-NODEPORTS", "-N"], ["filter", "KUBE-PROXY-FIREWALL", "-N"], ["nat", "KUBE-EXTERNAL-SERVICES", "-N"], ["nat", "PREROUTING", "-P"], ["filter", "KUBE-SVC-A", "-N"]]
      .map(([t, c, d]) => `### ${t} ${c}\n${d === "-P" ? `-P ${c} ACCEPT` : `-N ${c}`}\n${SHAPES.map((l) => l.replace("-A C", `-A ${c}`)).join("\n")}\n`).join("");
    const env = { NP_KEYS: "ip:10.0.0.1 port:30500", A: AWK_SELECT, PATH: process.env.PATH ?? "/usr/bin:/bin" };
    const want = spawnSync("dash", ["-c", walkHarness("awk")], { input, env }).stdout.toString();
    // the shapes are decided both ways: some rules of the dispatch chains are kept, some left out
    expect(want).toContain("\nF: KUBE-SVC-A KUBE-MARK-MASQ KUBE-NET KUBE-NOMASK-KEY KUBE-RANGE KUBE-MULTI KUBE-GOTO-KEY KUBE-QUOTED KUBE-UNTERMINATED KUBE-NODEPORTS\n");
    expect(want).toMatch(/^-A KUBE-SERVICES .*-j KUBE-SVC-OTHER$/m); // the first KUBE-SVC- jump of nat KUBE-SERVICES
    expect(want).not.toMatch(/^-A KUBE-NODEPORTS .*-j KUBE-SVC-OTHER$/m);
    expect(want).not.toMatch(/^-A KUBE-(SERVICES|NODEPORTS|PROXY-FIREWALL|EXTERNAL-SERVICES) .*-j KUBE-(SVC-B|NOMASK-OTHER|PORT-OTHER)$/m);
    expect(want).toMatch(/^-A PREROUTING .*-j KUBE-PORT-OTHER$/m); // a chain kept whole
    for (const sh of SHELLS) {
      const got = spawnSync(sh[0]!, [...sh.slice(1), "-c", walkHarness("sh")], { input, env });
      expect(got.stdout.toString(), sh.join(" ")).toBe(want);
    }
  });

  it("every Service of the real dumps, every chain of nat and filter: the same declarations, rules and jump targets under dash, bash and busybox sh", () => {
    let blocks = 0;
    for (const { file: f, text, bundle } of realDumps()) {
      const chains: [string, string][] = [];
      let table = "";
      for (const line of text.split("\n")) {
        if (line.startsWith("*")) table = line.slice(1);
        const m = /^:(\S+) /.exec(line);
        if (m && (table === "nat" || table === "filter")) chains.push([table, m[1]!]);
      }
      const input = chains.map(([t, c]) => `### ${t} ${c}\n${listing(text, t, c)}`).join("");
      for (const s of bundle.objects.services) {
        const keys = keyWords(bundle.objects, s.metadata.namespace!, s.metadata.name, "node-1");
        const env = { NP_KEYS: keys, A: AWK_SELECT, PATH: process.env.PATH ?? "/usr/bin:/bin" };
        const ref = spawnSync("dash", ["-c", walkHarness("awk")], { input, env, maxBuffer: 1 << 28 });
        expect(ref.status, ref.stderr.toString()).toBe(0);
        const want = ref.stdout.toString();
        expect(want.split("### ").length - 1).toBe(chains.length);
        blocks += chains.length;
        for (const sh of SHELLS) {
          const got = spawnSync(sh[0]!, [...sh.slice(1), "-c", walkHarness("sh")], { input, env, maxBuffer: 1 << 28 });
          expect(got.status, got.stderr.toString()).toBe(0);
          expect(got.stdout.toString(), `${f}: ${s.metadata.namespace}/${s.metadata.name} (${sh.join(" ")})`).toBe(want);
        }
      }
    }
    expect(blocks).toBeGreaterThan(1000);
  }, 300_000);
});

/** A save's chains per table, each with its declaration and rules in order (the walk lists chains in another order). */
function chainsOf(save: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let table = "";
  for (const line of save.split("\n")) {
    if (line.startsWith("*")) out[table = line.slice(1)] = {};
    else if (line.startsWith(":")) (out[table]![line.slice(1).split(" ")[0]!] ??= []).unshift(line);
    else if (line.startsWith("-A ")) out[table]![line.split(" ")[1]!]!.push(line);
  }
  return out;
}

describe.runIf(HAVE && HAVE_SHELLS)("the save walked with grep (no awk) selects what the awk program selects", () => {
  it("every Service of the real dumps: the same chains, declarations and rules under dash, bash and busybox sh", () => {
    const script = `set -f\nto() { "$@"; }\nKR='${KUBE_PROXY_ROOTS.join(" ")}'\n${SH_CHAIN_FILTER}${SH_SAVE_FILTER}\nsg "cat $0"`;
    let services = 0;
    for (const { file: f, path, text, bundle } of realDumps()) {
      for (const s of bundle.objects.services) {
        services++;
        const keys = keyWords(bundle.objects, s.metadata.namespace!, s.metadata.name, "node-1");
        const want = chainsOf(selectSave(text, keys));
        expect(Object.keys(want).length).toBeGreaterThan(0);
        for (const sh of SHELLS) {
          const r = spawnSync(sh[0]!, [...sh.slice(1), "-c", script, path], { env: { NP_KEYS: keys, PATH: process.env.PATH ?? "/usr/bin:/bin" } });
          expect(r.status, r.stderr.toString()).toBe(0);
          expect(chainsOf(r.stdout.toString()), `${f}: ${s.metadata.namespace}/${s.metadata.name} (${sh.join(" ")})`).toEqual(want);
        }
      }
    }
    expect(services).toBeGreaterThan(80);
  }, 300_000);
});

// The targeted collection's awk program (src/kube/rule_select_awk.ts) runs with whatever awk the node image has:
// mawk (Debian, Ubuntu), gawk (RHEL-family hosts, reached with --profile sysadmin through chroot /host), busybox awk
// (Alpine images such as netshoot). Each must select the same rules. Found by this test: the program once named an
// array `RT`, gawk's record-terminator variable, and gawk refused to run it at all ("split: second argument is not an
// array"), so every targeted collection on a gawk image failed.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AWK_SELECT } from "../src/kube/rule_select_awk.ts";
import { requireTools } from "./helpers/netns.ts";
import { bundleFromDump, keyWords, selectSave } from "./helpers/targeted_selection.ts";

const AWKS: readonly (readonly string[])[] = [["mawk"], ["gawk"], ["busybox", "awk"]];
const HAVE = requireTools("awk implementations (mawk, gawk, busybox awk)", ["mawk", "gawk", "busybox"]);
const NODE_FORMAT = "tests/fixtures/node-format";

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
    const dumps = readdirSync(NODE_FORMAT).filter((f) => f.endsWith("tables-save"));
    expect(dumps.length).toBeGreaterThan(40);
    let services = 0;
    for (const f of dumps) {
      const text = readFileSync(join(NODE_FORMAT, f), "utf8");
      const bundle = bundleFromDump(text, f.includes("ip6tables") ? "ip6tables-save" : "iptables-save");
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

// Audit roundtrip finding 7: on a node in nftables mode the report's source line said only `state from
// kube-proxy-pod: kube-proxy-nc`, while an iptables node's names the command that listed its rules. It now names the
// nftables listing too, with the command the collection script gives that section.
import { describe, expect, it } from "vitest";
import type { CommandOutput } from "../src/bundle/bundle.ts";
import type { CollectionResult } from "../src/bundle/collection_output.ts";
import { backendDetail } from "../src/kube/collect_node.ts";
import { TARGETED_SCRIPT } from "../src/kube/targeted_script.ts";

/** The command the collection script names for a section (its `begin SECTION "CMD"` line that is not the deferred one). */
function scriptCommand(section: string): string {
  const m = [...TARGETED_SCRIPT.matchAll(new RegExp(`begin ${section} "([^"$]+)"`, "g"))].map((x) => x[1]!).filter((c) => !c.includes("deferred"));
  expect(m.length).toBeGreaterThan(0);
  return m[0]!;
}

const result = (sections: CollectionResult["sections"]): CollectionResult => ({ sections, complete: true, started: true, truncated: [], timedOut: [], problems: [] });
const out = (command: string, stdout = "", exitCode = 0, stderr?: string): CommandOutput => ({ command, stdout, exitCode, ...(stderr !== undefined ? { stderr } : {}) });

describe("the source line names how the node's rules were listed", () => {
  it("nftables mode: the nft listing of kube-proxy's tables", () => {
    const nft = scriptCommand("nft-text");
    expect(nft).toBe("nft list table ip kube-proxy; nft list table ip6 kube-proxy");
    const r = result({ "proxy-mode": out("GET http://127.0.0.1:10249/proxyMode", "nftables"), "nft-text": out(nft, "table ip kube-proxy {\n}\n") });
    expect(backendDetail(r)).toBe("nft-text via nft list table ip kube-proxy; nft list table ip6 kube-proxy");
  });

  it("iptables mode: unchanged (backend, then the save)", () => {
    const r = result({
      "iptables-backend": out("detect", "nft", 0, "kubelet chain found by iptables-nft -t mangle -S"),
      "iptables-save": out("iptables-nft-save | awk: the chains of the Service's packets", "*nat\nCOMMIT\n"),
    });
    expect(backendDetail(r)).toBe("iptables nft backend (kubelet chain found by iptables-nft -t mangle -S); iptables-save via iptables-nft-save | awk: the chains of the Service's packets");
  });

  it("an nft that is not there (exit 127) is not named as the listing", () => {
    expect(backendDetail(result({ "nft-text": out("nft list table ip kube-proxy; nft list table ip6 kube-proxy", "", 127) }))).toBe("");
  });
});

/**
 * ChainSlots (src/datapath/chain_slots.ts), the name → slot index of the iptables-save parser: it must answer as a
 * Map does, for kube-proxy's chain names, for names that collide in its hash (same length, same last eight
 * characters), for short names, across growth to hundreds of thousands of names, and after the first deletion or
 * redeclaration turns it into a Map.
 */
import { describe, expect, it } from "vitest";
import { prng } from "../bench/cluster_plan.ts"; // seeded, so a failure can be replayed
import { ChainSlots } from "../src/datapath/chain_slots.ts";


const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** Names of three kinds: kube-proxy's hashed chains, names that share length and tail, short names. */
function nameOf(kind: number, i: number, rnd: () => number): string {
  if (kind === 0) {
    let h = "";
    for (let k = 0; k < 16; k++) h += BASE32[Math.floor(rnd() * 32)];
    return `KUBE-${["SEP", "SVC", "SVL", "EXT", "FW"][i % 5]}-${h}`;
  }
  if (kind === 1) return `${String(i % 100000).padStart(5, "0")}-SAMETAIL`; // same length and last 8 characters
  return `C${i % 997}`; // shorter than 8
}

/** The index and a reference Map, fed the same declarations (the parser's contract: slot = names.length). */
class Pair {
  readonly names: string[] = [];
  readonly slots = new ChainSlots(this.names);
  readonly ref = new Map<string, number>();

  declare(name: string): boolean {
    const slot = this.names.length;
    this.names.push(name);
    const before = this.ref.size;
    this.ref.set(name, slot);
    const isNew = this.ref.size !== before;
    const got = this.slots.add(name, slot);
    if (got !== isNew) expect(got, name).toBe(isNew); // one expect per mismatch: 300,000 calls otherwise
    return isNew;
  }

  remove(name: string): void {
    expect(this.slots.delete(name), name).toBe(this.ref.delete(name));
  }

  check(probes: string[]): void {
    expect(this.slots.size).toBe(this.ref.size);
    // compared as text: a failing diff of tens of thousands of pairs would take minutes to print
    const text = (it: Iterable<unknown>) => JSON.stringify([...it]);
    const same = (a: string, b: string, what: string) => {
      if (a !== b) expect(`${what} differ from the Map's at character ${[...a].findIndex((c, i) => c !== b[i])}`).toBe(`${what} equal`);
    };
    same(text(this.slots.entries()), text(this.ref.entries()), "entries");
    same(text(this.slots.keys()), text(this.ref.keys()), "keys");
    same(text(this.slots.values()), text(this.ref.values()), "values");
    for (const p of probes) {
      expect(this.slots.get(p), p).toBe(this.ref.get(p));
      expect(this.slots.has(p), p).toBe(this.ref.has(p));
    }
  }
}

describe("ChainSlots answers as a Map", () => {
  it("kube-proxy names, colliding names and short names, declared once each, then looked up (present and absent)", () => {
    const rnd = prng(12);
    const p = new Pair();
    const declared: string[] = [];
    for (let i = 0; i < 30000; i++) {
      const name = nameOf(i % 3, i, rnd);
      if (p.ref.has(name)) continue; // redeclarations are the next test's
      p.declare(name);
      declared.push(name);
    }
    const absent = ["KUBE-SEP-AAAAAAAAAAAAAAAA", "99999-SAMETAIL", "C998", "", "KUBE-SERVICES", "X-SAMETAIL", declared[5]!.toLowerCase()];
    p.check([...declared.filter((_, i) => i % 7 === 0), ...absent]);
    const wrong = declared.flatMap((n) => (p.slots.get(n) === p.ref.get(n) ? [] : [`${n}: ${p.slots.get(n)} (want ${p.ref.get(n)})`]));
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it("grows to 300,000 names (a 50,000-Service node's nat table) and finds each of them", () => {
    const rnd = prng(7);
    const p = new Pair();
    const names = new Set<string>();
    while (names.size < 300000) names.add(nameOf(0, names.size, rnd));
    for (const n of names) p.declare(n);
    expect(p.slots.size).toBe(300000);
    const wrong = [...names].flatMap((n, i) => (p.slots.get(n) === i ? [] : [`${n}: ${p.slots.get(n)} (want ${i})`]));
    expect(wrong.slice(0, 5)).toEqual([]); // the first few only: a diff of 300,000 items takes minutes
    expect(p.slots.get("KUBE-SEP-ZZZZZZZZZZZZZZZ2")).toBe(p.ref.get("KUBE-SEP-ZZZZZZZZZZZZZZZ2"));
  });

  it("a redeclaration keeps the name's place with its new slot, as Map#set does, and the index stays a Map after it", () => {
    const p = new Pair();
    for (const n of ["KUBE-SERVICES", "KUBE-SVC-AAAAAAAAAAAAAAAA", "00001-SAMETAIL", "00002-SAMETAIL", "C1"]) p.declare(n);
    expect(p.declare("00001-SAMETAIL")).toBe(false);
    p.check(["00001-SAMETAIL", "00002-SAMETAIL", "C1", "C2"]);
    expect(p.slots.get("00001-SAMETAIL")).toBe(5);
    expect(p.declare("KUBE-MARK-MASQ")).toBe(true);
    p.check(["KUBE-MARK-MASQ", "KUBE-SERVICES"]);
  });

  it("deletions (-X) and random declarations, redeclarations and deletions match a Map at every step", () => {
    for (const seed of [1, 2, 3]) {
      const rnd = prng(seed);
      const p = new Pair();
      const pool = Array.from({ length: 400 }, (_, i) => nameOf(i % 3, i, rnd));
      for (let step = 0; step < 3000; step++) {
        const r = rnd();
        const name = pool[Math.floor(rnd() * pool.length)]!;
        if (r < 0.7 && !p.ref.has(name)) p.declare(name);
        else if (r < 0.8) p.declare(name); // may be a redeclaration
        else if (r < 0.9) p.remove(name);
        if (step % 250 === 0) p.check(pool.slice(0, 50));
      }
      p.check(pool);
    }
  });

  it("a deletion of a name it does not hold changes nothing and keeps the fast index", () => {
    const p = new Pair();
    for (const n of ["A", "B", "KUBE-SEP-BBBBBBBBBBBBBBBB"]) p.declare(n);
    p.remove("KUBE-SEP-CCCCCCCCCCCCCCCC");
    p.check(["A", "B", "KUBE-SEP-BBBBBBBBBBBBBBBB"]);
    p.declare("C");
    p.check(["C"]);
  });

  it("refuses a slot that is not the next declaration (the parser's contract)", () => {
    const names = ["A", "B"];
    const s = new ChainSlots(names);
    expect(s.add("A", 0)).toBe(true);
    expect(() => s.add("A", 1)).toThrow('ChainSlots.add: slot 1 is not the next declaration of "A"');
  });
});

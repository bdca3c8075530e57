/**
 * Chain name → slot for the chains of one iptables table as the iptables-save parser declares them
 * (iptables_save.ts ChainIndex): a `Map<string, number>` in behaviour, made for hundreds of thousands of names.
 *
 * Why not a Map: a 100,000-Service node declares ~610,000 chains, and `Map#set` of that many names cost ~450 ms of the
 * parse on this project's 2-core bench machine (~0.7 µs each, against ~0.25 µs each at 61,000 names: the Map's one
 * large backing store, rehashed as it doubles). Here the slots are in an `Int32Array` with open addressing, hashed from
 * the last eight characters and the length of the name (kube-proxy's own chains end in 16 characters of base32 hash,
 * other names are compared in full on a collision): ~200 ms at 610,000 names, about the Map's time at 61,000
 * (`.tmp` measurements of one parse per process, in the issue 12 note of 2026-11-28).
 *
 * Names are only ever added while the table holds one slot per name in declaration order, which is how iptables-save
 * prints a table. The first deletion (`-X`) or second declaration of a name (a restore buffer's `:CHAIN` that
 * flushes it) turns it into a plain Map from then on, with the Map's semantics (a redeclared name keeps its place in
 * the iteration order and takes the new slot).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/**
 * A hash of a name from its length and its last eight characters (all of them when shorter), as a 32-bit integer.
 * @param name any string.
 */
function tailHash(name: string): number {
  const n = name.length;
  let h = Math.imul(n, 0x9e3779b1);
  if (n >= 8) {
    h = Math.imul(h ^ (name.charCodeAt(n - 1) | (name.charCodeAt(n - 2) << 8) | (name.charCodeAt(n - 3) << 16) | (name.charCodeAt(n - 4) << 24)), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13) ^ (name.charCodeAt(n - 5) | (name.charCodeAt(n - 6) << 8) | (name.charCodeAt(n - 7) << 16) | (name.charCodeAt(n - 8) << 24)), 0xc2b2ae35);
  } else {
    for (let i = 0; i < n; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  }
  return h ^ (h >>> 16);
}

/**
 * The slots of one table's chain names; see the module comment. Slots are numbered by the caller, 0, 1, 2… in
 * declaration order; `names[slot]` is the name of each slot (the caller's array, shared, never changed here).
 */
export class ChainSlots {
  /** Slot + 1 per bucket (0: empty); power-of-two length, at most half full. */
  #buckets = new Int32Array(256);
  /** {@link tailHash} of each slot's name, by slot (to grow without hashing again). */
  #hashes = new Int32Array(128);
  #count = 0;
  /** Set at the first deletion or redeclaration: from then on the only index. */
  #map: Map<string, number> | undefined;
  readonly #names: readonly string[];

  /** @param names the caller's names by slot; {@link add} is called with `names[slot] === name`. */
  constructor(names: readonly string[]) {
    this.#names = names;
  }

  /** Number of names (Map#size). */
  get size(): number {
    return this.#map ? this.#map.size : this.#count;
  }

  /**
   * Maps `name` to `slot` (Map#set).
   * @returns false when `name` had a slot already (it now has `slot`: a redeclaration), true when it is new.
   */
  add(name: string, slot: number): boolean {
    if (this.#map) {
      const before = this.#map.size;
      this.#map.set(name, slot);
      return this.#map.size !== before;
    }
    if (slot !== this.#count || this.#names[slot] !== name) throw new Error(`ChainSlots.add: slot ${slot} is not the next declaration of "${name}"`);
    const h = tailHash(name);
    if (this.#lookup(name, h) !== undefined) {
      this.#toMap().set(name, slot);
      return false;
    }
    if (2 * (this.#count + 1) > this.#buckets.length) this.#grow();
    if (slot >= this.#hashes.length) {
      const grown = new Int32Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    this.#hashes[slot] = h;
    const b = this.#buckets;
    const mask = b.length - 1;
    let i = h & mask;
    while (b[i] !== 0) i = (i + 1) & mask;
    b[i] = slot + 1;
    this.#count++;
    return true;
  }

  /** The slot of `name`, or undefined (Map#get). */
  get(name: string): number | undefined {
    return this.#map ? this.#map.get(name) : this.#lookup(name, tailHash(name));
  }

  /** Whether `name` has a slot (Map#has). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Drops `name` (Map#delete). @returns whether it had a slot. */
  delete(name: string): boolean {
    if (!this.#map && this.#lookup(name, tailHash(name)) === undefined) return false;
    return this.#toMap().delete(name);
  }

  /** The names and their slots, in the order each name was first added (Map#entries). */
  *entries(): Generator<[string, number], undefined, unknown> {
    if (this.#map) {
      yield* this.#map.entries();
      return;
    }
    for (let slot = 0; slot < this.#count; slot++) yield [this.#names[slot]!, slot];
  }

  /** The names, in the order of {@link entries}. */
  *keys(): Generator<string, undefined, unknown> {
    if (this.#map) {
      yield* this.#map.keys();
      return;
    }
    for (let slot = 0; slot < this.#count; slot++) yield this.#names[slot]!;
  }

  /** The slots, in the order of {@link entries}. */
  *values(): Generator<number, undefined, unknown> {
    if (this.#map) {
      yield* this.#map.values();
      return;
    }
    for (let slot = 0; slot < this.#count; slot++) yield slot;
  }

  #lookup(name: string, h: number): number | undefined {
    const b = this.#buckets;
    const mask = b.length - 1;
    for (let i = h & mask;; i = (i + 1) & mask) {
      const v = b[i]!;
      if (v === 0) return undefined;
      if (this.#hashes[v - 1] === h && this.#names[v - 1] === name) return v - 1;
    }
  }

  #grow(): void {
    const old = this.#buckets;
    const b = new Int32Array(old.length * 2);
    const mask = b.length - 1;
    for (let k = 0; k < old.length; k++) {
      const v = old[k]!;
      if (v === 0) continue;
      let i = this.#hashes[v - 1]! & mask;
      while (b[i] !== 0) i = (i + 1) & mask;
      b[i] = v;
    }
    this.#buckets = b;
  }

  /** The Map of the names so far (one slot each, in order), which replaces the buckets from now on. */
  #toMap(): Map<string, number> {
    if (this.#map) return this.#map;
    const m = new Map<string, number>();
    for (let slot = 0; slot < this.#count; slot++) m.set(this.#names[slot]!, slot);
    this.#map = m;
    this.#buckets = new Int32Array(0);
    this.#hashes = new Int32Array(0);
    return m;
  }
}

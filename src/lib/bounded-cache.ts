// A small least-recently-used map with a fixed number of entries: what the signer keeps
// per sending domain (lookups, decrypted keys) must not grow with the number of domains.

export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, not ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting moves the key to the young end.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** The value, made by `make(key)` and stored when absent (pure derivations of the key). */
  getOrMake(key: K, make: (key: K) => V): V {
    let value = this.get(key);
    if (value === undefined) this.set(key, (value = make(key)));
    return value;
  }

  /** Stores the value as the most recently used, dropping the least recently used beyond the bound. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  keys(): K[] {
    return [...this.entries.keys()];
  }
}

/** A Map that forgets its oldest entries beyond `capacity` (insertion order). */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** The keys, oldest first. */
  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }
}

/** A Set that forgets its oldest members beyond `capacity`. */
export class BoundedSet<T> {
  private readonly map: BoundedMap<T, true>;

  constructor(capacity: number) {
    this.map = new BoundedMap(capacity);
  }

  has(value: T): boolean {
    return this.map.has(value);
  }

  add(value: T): void {
    this.map.set(value, true);
  }

  /** The members, oldest first. */
  values(): IterableIterator<T> {
    return this.map.keys();
  }
}

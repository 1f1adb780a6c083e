/**
 * Remembers the last `capacity` update ids of one bot, so an update delivered twice (a webhook
 * retry, a replayed batch) is handled once.
 */
export class UpdateDedupe {
  readonly #seen = new Set<number>();
  readonly #order: number[] = [];

  /** @param capacity - how many recent ids to remember; default 2048 */
  constructor(private readonly capacity = 2048) {}

  /**
   * Records an update id.
   *
   * @returns true the first time an id is seen, false for a duplicate
   */
  add(updateId: number): boolean {
    if (this.#seen.has(updateId)) return false;
    this.#seen.add(updateId);
    this.#order.push(updateId);
    if (this.#order.length > this.capacity) this.#seen.delete(this.#order.shift() as number);
    return true;
  }

  /** Forgets an id, so a redelivery of an update that failed is handled again. */
  forget(updateId: number): void {
    if (this.#seen.delete(updateId)) this.#order.splice(this.#order.indexOf(updateId), 1);
  }
}

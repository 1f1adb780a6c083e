/**
 * What legitimately differs between two runs of the same steps on two stores, mapped to stable
 * placeholders so the answers can be compared as data: generated ids (session ids, run ids, the
 * uuid of a sub-agent key), timestamps, durations and transcript locators. Ids and timestamps get
 * numbered placeholders in order of first appearance, so equal values stay equal and different
 * ones stay different; nothing else is touched.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ID_PLACEHOLDER = /<id:\d+>/g;
/** A transcript locator's store-specific head (`memory:`, `postgres:`, `sqlite:<file>#`). */
const LOCATOR_HEAD = /\b(?:memory:|postgres:|sqlite:[^\s#·]+#)(?=\S)/g;
/** The duration in an announce's stats line (see the runtime's `renderAnnounce`). */
const ANNOUNCE_RUNTIME = /\bruntime (?:\d+ ms|\d+\.\d s|\d+ min \d+ s)/g;
/** The tail of an id a snippet's leading `…` cut into, and the head of one its trailing `…` cut. */
const CUT_ID_START = /^…[0-9a-f]{0,12}(?:-[0-9a-f]{1,12})+(?![0-9a-f-])/i;
const CUT_ID_END = /(?<=subagent:|session )[0-9a-f][0-9a-f-]{0,34}…$/i;

/**
 * True when a text holds parts whose length differs between stores (a transcript locator, a
 * duration): a snippet of it is cut at places that differ too, so it cannot be compared as text.
 */
export function hasStoreSpecificParts(text: string): boolean {
  return new RegExp(LOCATOR_HEAD.source).test(text) || new RegExp(ANNOUNCE_RUNTIME.source).test(text);
}

/** Fields that hold epoch milliseconds. */
const TIME_FIELDS = new Set(['updatedAt', 'startedAt', 'endedAt', 'createdAt', 'at', 'timestamp']);
/** Fields that hold a duration in milliseconds. */
const DURATION_FIELDS = new Set(['runtimeMs']);

/** The placeholders of one store's run: each store gets its own, filled in the same order. */
export class Placeholders {
  private readonly idOf = new Map<string, string>();
  private readonly rawOf = new Map<string, string>();
  private readonly timeOf = new Map<number, string>();

  /** The placeholder of a generated id, numbering it if new. */
  id(raw: string): string {
    const key = raw.toLowerCase();
    let placeholder = this.idOf.get(key);
    if (placeholder === undefined) {
      placeholder = `<id:${this.idOf.size + 1}>`;
      this.idOf.set(key, placeholder);
      this.rawOf.set(placeholder, raw);
    }
    return placeholder;
  }

  /** Every id in `text` numbered (first appearance first), without changing the text. */
  register(text: string): void {
    for (const match of text.matchAll(UUID)) this.id(match[0]);
  }

  /** The placeholder of an epoch-milliseconds value, numbering it if new. */
  time(ms: number): string {
    let placeholder = this.timeOf.get(ms);
    if (placeholder === undefined) {
      placeholder = `<t:${this.timeOf.size + 1}>`;
      this.timeOf.set(ms, placeholder);
    }
    return placeholder;
  }

  /** `text` with its id placeholders replaced by this store's ids (arguments of a call). */
  denormalise(text: string): string {
    return text.replace(ID_PLACEHOLDER, (placeholder) => {
      const raw = this.rawOf.get(placeholder);
      if (raw === undefined) throw new Error(`no id behind ${placeholder} on this store`);
      return raw;
    });
  }

  /** `value` with every string, object and array of it denormalised (see {@link denormalise}). */
  denormaliseDeep<T>(value: T): T {
    return mapStrings(value, (text) => this.denormalise(text)) as T;
  }

  /**
   * An answer with what legitimately differs between stores replaced by placeholders. With
   * `numberTimes: false`, timestamps not seen before become `<t:?>` instead of taking the next
   * number: for answers whose order is the store's own (search ranking), so they cannot shift
   * the numbering of later answers.
   */
  normalise(value: unknown, options: { numberTimes?: boolean } = {}): unknown {
    return this.walk(value, undefined, options.numberTimes ?? true);
  }

  private walk(value: unknown, field: string | undefined, numberTimes: boolean): unknown {
    if (typeof value === 'string') {
      if (field === 'time') return this.timeOrPeek(parseIso(value), numberTimes);
      if (field === 'snippet')
        return this.text(value).replace(CUT_ID_START, '…<id:cut>').replace(CUT_ID_END, '<id:cut>…');
      return this.text(value);
    }
    if (typeof value === 'number') {
      if (field !== undefined && TIME_FIELDS.has(field)) return this.timeOrPeek(value, numberTimes);
      if (field !== undefined && DURATION_FIELDS.has(field)) return checkedDuration(value);
      return value;
    }
    if (Array.isArray(value)) return value.map((item) => this.walk(item, undefined, numberTimes));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.walk(v, k, numberTimes)]));
    }
    return value;
  }

  private timeOrPeek(ms: number, numberTimes: boolean): string {
    return numberTimes ? this.time(ms) : (this.timeOf.get(ms) ?? '<t:?>');
  }

  private text(text: string): string {
    return text
      .replace(UUID, (raw) => this.id(raw))
      .replace(LOCATOR_HEAD, 'transcript:')
      .replace(ANNOUNCE_RUNTIME, 'runtime <duration>');
  }
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]));
  }
  return value;
}

function parseIso(text: string): number {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/.test(text) || Number.isNaN(ms)) {
    throw new Error(`"${text}" is not an ISO 8601 time with an offset`);
  }
  return ms;
}

/** A duration is a whole, non-negative number of milliseconds; its value is timing, not behaviour. */
function checkedDuration(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`${ms} is not a duration in milliseconds`);
  return '<duration>';
}

import {
  type Attributes,
  type AttributeValue,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
} from '@opentelemetry/api';
import { hrDuration, monotonicHrTime, toHrTime } from './hr-time.js';

const NO_TIME: HrTime = [0, 0];
/** Shared by the spans that never set a status, add a link or add an event (most): nothing is copied. */
const UNSET_STATUS: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];
const NO_EVENTS: SpanEvent[] = Object.freeze([]) as unknown as SpanEvent[];

/** At most this many attributes per span, events per span, links per span and attributes per event. */
export const SPAN_ITEM_LIMIT = 128;

/** A resource as exporters read it: the SDK's `Resource` (from `@opentelemetry/resources`) fits. */
export interface SpanResource {
  readonly attributes: Attributes;
  readonly schemaUrl?: string;
  /** True while detectors still resolve attributes; exports then wait for them. */
  readonly asyncAttributesPending?: boolean;
  waitForAsyncAttributes?(): Promise<void>;
}

/** The instrumentation scope of a tracer: its name, version and schema URL. */
export interface SpanScope {
  readonly name: string;
  readonly version?: string;
  readonly schemaUrl?: string;
}

/** An event on a span. */
export interface SpanEvent {
  readonly name: string;
  readonly time: HrTime;
  readonly attributes?: Attributes;
  readonly droppedAttributesCount?: number;
}

/**
 * An ended span as OpenTelemetry span exporters read it (the SDK's `ReadableSpan`), so that
 * `OTLPTraceExporter` and the SDK's other exporters take it.
 */
export interface ExportedSpan {
  readonly name: string;
  readonly kind: SpanKind;
  spanContext(): SpanContext;
  readonly parentSpanContext?: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly links: Link[];
  readonly events: SpanEvent[];
  readonly ended: boolean;
  readonly resource: SpanResource;
  readonly instrumentationScope: SpanScope;
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
}

/** What a span is created with. */
export interface RecordedSpanInit {
  name: string;
  kind: SpanKind;
  context: SpanContext;
  parent: SpanContext | undefined;
  attributes: Attributes | undefined;
  links: readonly Link[] | undefined;
  startTime: TimeInput | undefined;
  resource: SpanResource;
  scope: SpanScope;
  /** Called once, when the span ends. */
  onEnd: (span: RecordedSpan) => void;
}

/**
 * A recording span: the API's `Span` while it runs, an {@link ExportedSpan} once ended. Attribute
 * values the API does not allow (objects, functions, `undefined`) are dropped and counted, as are
 * attributes, events and links past {@link SPAN_ITEM_LIMIT}; calls after `end()` do nothing.
 */
export class RecordedSpan implements Span, ExportedSpan {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  status: SpanStatus = UNSET_STATUS;
  readonly attributes: Attributes;
  links: Link[] = NO_LINKS;
  events: SpanEvent[] = NO_EVENTS;
  ended = false;
  readonly resource: SpanResource;
  readonly instrumentationScope: SpanScope;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  private attributeCount = 0;
  private readonly startedAt: number;
  private readonly startTimeGiven: TimeInput | undefined;
  private endedAt = 0;
  private endTimeGiven: TimeInput | undefined;
  /** Worked out on the first read after the span ended: a span waiting for export holds numbers. */
  private times: { start: HrTime; end: HrTime; duration: HrTime } | undefined;
  private readonly context: SpanContext;
  private readonly onEnd: (span: RecordedSpan) => void;

  constructor(init: RecordedSpanInit) {
    this.name = init.name;
    this.kind = init.kind;
    this.context = init.context;
    this.parentSpanContext = init.parent;
    this.startedAt = performance.now();
    this.startTimeGiven = frozenTime(init.startTime);
    this.resource = init.resource;
    this.instrumentationScope = init.scope;
    this.onEnd = init.onEnd;
    this.attributes = init.attributes ? this.initialAttributes(init.attributes) : {};
    if (init.links) this.addLinks(init.links);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** When the span started (given, or the `performance.now()` reading at its start); zero until it ends. */
  get startTime(): HrTime {
    return this.endedTimes()?.start ?? NO_TIME;
  }

  /** When the span ended; zero until it does. */
  get endTime(): HrTime {
    return this.endedTimes()?.end ?? NO_TIME;
  }

  /** From start to end, never negative; zero until the span ends. */
  get duration(): HrTime {
    return this.endedTimes()?.duration ?? NO_TIME;
  }

  private endedTimes(): { start: HrTime; end: HrTime; duration: HrTime } | undefined {
    if (!this.ended) return undefined;
    if (!this.times) {
      const start =
        this.startTimeGiven === undefined ? monotonicHrTime(this.startedAt) : toHrTime(this.startTimeGiven);
      const end =
        this.endTimeGiven === undefined ? monotonicHrTime(this.endedAt) : toHrTime(this.endTimeGiven);
      this.times = { start, end, duration: hrDuration(start, end) };
    }
    return this.times;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.ended || value === undefined || key === '') return this;
    if (!isAttributeValue(value)) {
      this.droppedAttributesCount++;
      return this;
    }
    if (!Object.hasOwn(this.attributes, key)) {
      if (this.attributeCount >= SPAN_ITEM_LIMIT) {
        this.droppedAttributesCount++;
        return this;
      }
      this.attributeCount++;
    }
    this.attributes[key] = Array.isArray(value) ? [...value] : value;
    return this;
  }

  /**
   * A copy of a new span's attributes, as `setAttributes` would keep them. Copied whole first (the
   * engine copies an object literal's layout at once), then checked: values the API allows stay,
   * arrays are copied, and the rest is deleted (and counted when it was a value).
   */
  private initialAttributes(given: Attributes): Attributes {
    const attributes: Attributes = { ...given };
    for (const key in attributes) {
      const value = attributes[key];
      const type = typeof value;
      const room = key !== '' && this.attributeCount < SPAN_ITEM_LIMIT;
      if (room && (type === 'string' || type === 'number' || type === 'boolean')) {
        this.attributeCount++;
      } else if (room && Array.isArray(value) && isAttributeValue(value)) {
        attributes[key] = [...value];
        this.attributeCount++;
      } else {
        if (value !== undefined && key !== '') this.droppedAttributesCount++;
        delete attributes[key];
      }
    }
    return attributes;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    if (this.events.length >= SPAN_ITEM_LIMIT) {
      this.droppedEventsCount++;
      return this;
    }
    const timeGiven = isTimeInput(attributesOrTime) ? attributesOrTime : time;
    const given = isTimeInput(attributesOrTime) ? undefined : attributesOrTime;
    const attributes = given ? eventAttributes(given) : undefined;
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push({
      name,
      time: timeGiven === undefined ? monotonicHrTime(performance.now()) : toHrTime(timeGiven),
      ...(attributes ? { attributes: attributes.kept, droppedAttributesCount: attributes.dropped } : {}),
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    if (this.links.length >= SPAN_ITEM_LIMIT) {
      this.droppedLinksCount++;
      return this;
    }
    const attributes = link.attributes ? eventAttributes(link.attributes) : undefined;
    if (this.links === NO_LINKS) this.links = [];
    this.links.push({
      context: link.context,
      ...(attributes ? { attributes: attributes.kept, droppedAttributesCount: attributes.dropped } : {}),
    });
    return this;
  }

  addLinks(links: readonly Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  /** As the specification says: `OK` is final, `UNSET` changes nothing, only `ERROR` keeps a message. */
  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) {
      return this;
    }
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === 'string'
        ? { code: status.code, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.endedAt = performance.now();
    this.endTimeGiven = frozenTime(endTime);
    this.onEnd(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  /** An `exception` event with the semantic conventions' `exception.*` attributes. */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') {
      attributes['exception.message'] = exception;
    } else {
      const type = exception.name ?? (exception.code === undefined ? undefined : String(exception.code));
      if (type !== undefined) attributes['exception.type'] = type;
      if (exception.message !== undefined) attributes['exception.message'] = exception.message;
      if (exception.stack !== undefined) attributes['exception.stacktrace'] = exception.stack;
    }
    this.addEvent('exception', attributes, time);
  }
}

/** A value the API allows: a string, number or boolean, or an array of them (and null or undefined). */
function isAttributeValue(value: unknown): value is AttributeValue {
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean') return true;
  if (!Array.isArray(value)) return false;
  for (const item of value) {
    if (item === null || item === undefined) continue;
    const itemType = typeof item;
    if (itemType !== 'string' && itemType !== 'number' && itemType !== 'boolean') return false;
  }
  return true;
}

/** A time given as a `Date` or an `HrTime` (which the caller may change later) copied now; numbers as they are. */
function frozenTime(time: TimeInput | undefined): TimeInput | undefined {
  return time === undefined || typeof time === 'number' ? time : toHrTime(time);
}

function isTimeInput(value: unknown): value is TimeInput {
  return typeof value === 'number' || value instanceof Date || Array.isArray(value);
}

/** An event's or link's attributes, the allowed ones copied, at most {@link SPAN_ITEM_LIMIT}. */
function eventAttributes(given: Attributes): { kept: Attributes; dropped: number } {
  const kept: Attributes = {};
  let count = 0;
  let dropped = 0;
  for (const key in given) {
    const value = given[key];
    if (value === undefined) continue;
    if (count >= SPAN_ITEM_LIMIT || key === '' || !isAttributeValue(value)) {
      dropped++;
      continue;
    }
    kept[key] = Array.isArray(value) ? [...value] : value;
    count++;
  }
  return { kept, dropped };
}

// Test data for the search benchmarks of store-sqlite and store-postgres: deterministic text drawn
// from a 4,000-word vocabulary with Zipf frequencies, as in natural language.

const NOW = Date.now();

/** A deterministic PRNG (mulberry32) so every run measures the same data. */
export function prng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(7);

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'sta',
  'vo',
  'dri',
  'nel',
  'pa',
  'tor',
  'gu',
  'shi',
  'bel',
  'ox',
  'fen',
];
/** The vocabulary, most frequent word first. */
export const VOCABULARY = Array.from({ length: 4000 }, (_, i) => {
  let word = '';
  for (let n = i + 15; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
const CDF = (() => {
  const weights = VOCABULARY.map((_, r) => 1 / (r + 1));
  const sum = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => {
    acc += w / sum;
    return acc;
  });
})();

function word() {
  const r = random();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CDF[mid] >= r) hi = mid;
    else lo = mid + 1;
  }
  return VOCABULARY[lo];
}

function text() {
  return Array.from({ length: 8 + Math.floor(random() * 17) }, word).join(' ');
}

/** Message `i`: 8 to 24 words, a user string or an assistant text block, in turn. */
export const message = (i, body = text()) =>
  i % 2 === 0
    ? { role: 'user', content: body, timestamp: NOW + i }
    : { role: 'assistant', content: [{ type: 'text', text: body }], timestamp: NOW + i };

/** A session record; every fifth belongs to agent `ops`, every third is a group. */
export const session = (key, i) => ({
  key,
  sessionId: `sid-${key}`,
  agentId: i % 5 === 0 ? 'ops' : 'main',
  kind: i % 3 === 0 ? 'group' : 'dm',
  createdAt: NOW,
  updatedAt: NOW + i,
});

/**
 * Measures searchMessages for three two-word queries (the first carries the 20 ms target), over
 * all sessions and scoped to one agent, adding a row per figure.
 *
 * @param store - the store under test
 * @param p50 - measures a function, resolving with its p50 in ms
 * @param row - adds a result row: (workload, value, target, ok?)
 */
export async function benchSearches(store, p50, row) {
  const queries = {
    'two mid-frequency words (ranks 200, 400)': `${VOCABULARY[199]} ${VOCABULARY[399]}`,
    'a rare and a common word (ranks 2000, 20)': `${VOCABULARY[1999]} ${VOCABULARY[19]}`,
    'two very common words (ranks 5, 10)': `${VOCABULARY[4]} ${VOCABULARY[9]}`,
  };
  const ms = (v) => `${v.toFixed(3)} ms`;
  for (const [name, query] of Object.entries(queries)) {
    const { total } = await store.searchMessages({ text: query, limit: 10 });
    const all = await p50(() => store.searchMessages({ text: query, limit: 10 }));
    const scoped = await p50(() => store.searchMessages({ text: query, limit: 10, agentIds: ['main'] }));
    const target = name.startsWith('two mid');
    row(
      `search "${name}", limit 10, ${total} matches`,
      ms(all),
      target ? 'p50 <= 20 ms' : '(info)',
      target ? all <= 20 : undefined,
    );
    row('  same, scoped to one agent (agent visibility)', ms(scoped), '(info)');
  }
}

/**
 * Fills a store with `sessions` sessions of `perSession` messages each, one transaction per session
 * (every fifth session belongs to agent `ops`).
 *
 * @returns the seconds it took
 */
export async function seedSearchStore(store, sessions, perSession) {
  process.stdout.write(
    `seeding ${sessions} sessions x ${perSession} messages (${sessions * perSession})...\n`,
  );
  const started = performance.now();
  for (let s = 0; s < sessions; s++) {
    const key = `agent:${s % 5 === 0 ? 'ops' : 'main'}:s${s}`;
    const batch = Array.from({ length: perSession }, (_, i) => message(i));
    await store.transaction(async (tx) => {
      await tx.putSession(session(key, s));
      await tx.appendMessages(key, batch);
    });
  }
  return (performance.now() - started) / 1000;
}

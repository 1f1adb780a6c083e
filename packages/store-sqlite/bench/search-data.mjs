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

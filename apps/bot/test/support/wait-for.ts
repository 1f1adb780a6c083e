/** Calls `get` every 250 ms until `ok` holds for its value, and returns it; throws naming `what` after `ms`. */
export async function waitFor<T>(
  get: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Polls `check` every 20 ms until it holds; throws naming `what` once `timeoutMs` has passed, so a
 * test that waited in vain fails saying what it waited for, not at the assertion after the wait.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

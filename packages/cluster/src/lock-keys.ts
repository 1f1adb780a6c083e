/**
 * PostgreSQL advisory locks take two 32-bit keys: the first names what Colloquy locks (so it never
 * meets another application's locks), the second is `hashtext(<name>)`.
 */
export const LOCK_CLASS = {
  /** Held by each live instance for as long as its control connection lives. */
  instance: 0x436f_6c01,
  /** Held by the instance that runs a single-connection channel (`ChannelContext.lease`). */
  lease: 0x436f_6c02,
  /** Taken while the cluster's own tables are created. */
  schema: 0x436f_6c03,
} as const;

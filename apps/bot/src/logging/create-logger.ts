import { type DestinationStream, type Logger, pino } from 'pino';

/** How log lines are written: `pretty` for people, `json` for machines, `auto` picks by terminal. */
export type LogFormat = 'pretty' | 'json' | 'auto';

/** Options of {@link createAppLogger}. */
export interface AppLoggerOptions {
  /** pino level. Default `info`. */
  level?: string;
  /** Default `auto`: pretty when stdout is a terminal, JSON lines otherwise. */
  format?: LogFormat;
  /**
   * Values to replace with `[redacted]` in log lines (tokens, keys). Read at every write, so values
   * pushed later (a token generated at start) are masked too. Values under 6 characters are ignored.
   */
  secrets?: readonly string[];
  /** Where lines go. Default stdout. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Creates the app's pino logger: pretty and coloured in a terminal (pino-pretty, in process, no
 * worker thread), JSON lines otherwise. Known secret values are masked in every line.
 *
 * @param options - level, format, secrets, destination
 * @returns a pino logger (it fits the `Logger` interface of `@colloquy/core`)
 */
export async function createAppLogger(options: AppLoggerOptions = {}): Promise<Logger> {
  const out = options.destination ?? process.stdout;
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && out.isTTY === true);
  const secrets = options.secrets ?? [];
  let stream: DestinationStream;
  if (pretty) {
    const { default: prettyStream } = await import('pino-pretty');
    stream = prettyStream({
      colorize: out.isTTY === true,
      sync: true,
      destination: out,
      ignore: 'pid,hostname',
      translateTime: 'HH:MM:ss',
      singleLine: true,
    });
  } else {
    stream = out as DestinationStream;
  }
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      hooks: { streamWrite: (line) => maskSecrets(line, secrets) },
    },
    stream,
  );
}

function maskSecrets(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) {
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  return out;
}

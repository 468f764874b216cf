import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** One JSON logger for the process; secrets never reach it (redacted paths below). */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'squeezeback' },
    redact: {
      paths: ['authorization', 'headers.authorization', 'token', 'mrss_token', '*.password'],
      censor: '[redacted]',
    },
  });
}

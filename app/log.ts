import pino, { type Logger } from 'pino';

/** Structured JSON logs; anything that may carry a secret is redacted before it is written. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'quire' },
    redact: {
      paths: [
        'headers["api-key"]',
        'headers.authorization',
        'headers.cookie',
        '*.password',
        '*.apiKey',
        'fields.*password*',
        'fields.current_open_password',
        'fields.current_permissions_password',
        'fields.new_open_password',
        'fields.new_permissions_password',
      ],
      censor: '[redacted]',
    },
  });
}

import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { AppError, TEXT } from '../errors.js';

/** The token of an `Authorization: Bearer <token>` header, if that is what it holds. */
export const bearerOf = (header: string | undefined) => /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];

const hash = (k: string) => createHash('sha256').update(k).digest('hex');

/**
 * Spec section 5 when API_KEYS is set: every request carries `Api-Key` (or `Authorization: Bearer`), except reads by unguessable id,
 * health and docs. The owner (hash of the key) marks what a request creates; delete and polling check it.
 */
export function apiKeyAuth(keys: Set<string> | null, ownerScope = false): MiddlewareHandler {
  const hashes = keys ? new Set([...keys].map(hash)) : null;
  return async (c, next) => {
    if (!hashes || isPublic(c.req.method, c.req.path, ownerScope)) {
      c.set('owner', null);
      return next();
    }
    // Agents (MCP clients) send the key as a bearer token.
    const key = c.req.header('api-key') ?? bearerOf(c.req.header('authorization'));
    if (!key) throw new AppError('key_missing', TEXT.keyMissing);
    const h = hash(key);
    // Comparing hashes in a Set: no early-exit string comparison on the secret itself.
    if (!hashes.has(h)) throw new AppError('key_invalid', TEXT.keyInvalid);
    c.set('owner', h);
    return next();
  };
}

function isPublic(method: string, path: string, ownerScope: boolean): boolean {
  if (['/up', '/health', '/ready', '/openapi.json'].includes(path) || path === '/docs' || path.startsWith('/docs/')) return true;
  // The web page and its assets are public; the API calls it makes carry the key the user typed.
  if ((method === 'GET' || method === 'HEAD') && (path === '/' || path.startsWith('/web/'))) return true;
  // Downloads by id, unless resources belong to their key (KEY_SCOPE=owner).
  return !ownerScope && (method === 'GET' || method === 'HEAD') && path.startsWith('/resource/');
}

/**
 * Redaction of secrets in what we print: the one place that decides what of a connection string may
 * appear in logs, errors, ready lines and `--json` output.
 */

/** What replaces a secret. */
export const MASK = '***';

/** Query parameters of a connection string that can hold a secret (`?password=…`, `sslpassword`, …). */
const SECRET_PARAM = /pass|secret|token|key/iu;

/**
 * A connection string safe to print: the password and secret-looking query parameters masked, the
 * rest (scheme, user, host, port, database) kept, so a reader can tell which server was tried.
 *
 * A value that is not a URL with a host (`notaurl`, `user:pw@host/db` without a scheme) is shown with
 * anything between its first `:` and its last `@` masked, and `password=…` pairs masked: what was
 * typed stays recognisable, a password inside it does not appear.
 *
 * @example redactUrl('postgres://app:s3cret@db:5432/app') // 'postgres://app:***@db:5432/app'
 */
export function redactUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url && url.host !== '') {
    if (url.password) url.password = MASK;
    for (const key of [...url.searchParams.keys()])
      if (SECRET_PARAM.test(key)) url.searchParams.set(key, MASK);
    // URLSearchParams percent-encodes the mask; show it as typed.
    return url.toString().replaceAll(encodeURIComponent(MASK), MASK);
  }
  return value
    .replace(/^([^:@]*):.*@/su, `$1:${MASK}@`)
    .replace(/\b(\w*(?:pass|secret|token|key)\w*)\s*=\s*\S+/giu, `$1=${MASK}`);
}

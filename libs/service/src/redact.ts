// The effective config as an operator may see it (the UI's config page):
// secrets replaced, credentials in URLs removed. Never log or serve config without it.

export const REDACTED = '********';

/** Flags whose value is a secret (the S3 secret key, the GCS and Azure keys and connection string, any password or token value; not the tokens *file* path). */
const SECRET_FLAG =
  /(secret|password|passwd|credential|api-key|private-key|account-key|connection-string|service-account|(?<!s-file|s-reload-period)token(?!s-file|s-reload-period))/i;

export function isSecretFlag(name: string): boolean {
  return SECRET_FLAG.test(name);
}

/** A copy of `config` with secret flags redacted (when set) and `user:pass@` dropped from URLs. */
export function redactConfig(config: Readonly<Record<string, unknown>>): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [name, value] of Object.entries(config)) {
    if (isSecretFlag(name) && value !== '' && value !== undefined && value !== null) out[name] = REDACTED;
    else if (typeof value === 'string') out[name] = value.replace(/(\w+:\/\/)[^/@\s]+@/g, `$1${REDACTED}@`);
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) out[name] = value;
    else out[name] = value === undefined ? null : JSON.stringify(value);
  }
  return out;
}

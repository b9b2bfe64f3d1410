// What a test child that reaches the internet (npm, to its registry) needs from this machine's
// environment, which vitest.config.ts takes NODE_EXTRA_CA_CERTS out of for every other child.

/** Where vitest.config.ts keeps NODE_EXTRA_CA_CERTS for the children that need it. */
export const KEPT_EXTRA_CA = 'FORGE_TEST_NODE_EXTRA_CA_CERTS';

/** Moves NODE_EXTRA_CA_CERTS out of `env` (the children it starts will not see it) to KEPT_EXTRA_CA. */
export function setAsideExtraCa(env: NodeJS.ProcessEnv): void {
  const extraCa = env.NODE_EXTRA_CA_CERTS;
  if (extraCa === undefined) return;
  env[KEPT_EXTRA_CA] = extraCa;
  delete env.NODE_EXTRA_CA_CERTS;
}

/** The machine's TLS trust and proxy, as environment variables (only those set). */
export function networkEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const extraCa = process.env[KEPT_EXTRA_CA] ?? process.env.NODE_EXTRA_CA_CERTS;
  if (extraCa !== undefined && extraCa !== '') env.NODE_EXTRA_CA_CERTS = extraCa;
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) {
    const value = process.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

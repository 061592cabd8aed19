// The word that stands where a secret was. Its own module: the recording code needs the word,
// not the HTTP client that redact.ts (and its undici) brings along.
export const REDACTED = '[redacted]'

// A spec's slug: the directory under specs/ that holds it. Its own module so a loop config can name a
// spec without loading the run state's schema.

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const SLUG_RULE = 'a slug: lower-case letters, digits and -, e.g. rate-limiter';

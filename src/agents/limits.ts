// Recognises plan usage-limit messages and works out when the limit resets.

/**
 * A usage-limit message is a short message of its own, so the phrase must open the text (after
 * punctuation, an emoji or `API Error:`). An agent's summary that merely mentions it does not count.
 */
const USAGE_LIMIT_OPENING =
  /^[^\p{L}\p{N}]*(?:API Error:\s*)?(?:Claude(?: AI)? usage limit reached|You(?:'|\u2019)ve (?:hit|reached) your\b[^.\n]{0,40}?\blimit|(?:[\w-]+ )?(?:session|5-hour|weekly|daily|usage) limit reached)/iu;

export function isUsageLimitText(text: string): boolean {
  return USAGE_LIMIT_OPENING.test(text.trimStart());
}

/**
 * What an API error reported only as text means (Codex, opencode and Gemini CLI give no status field
 * in every case): a credentials problem, a rate or usage limit, or an overloaded service.
 */
export function apiErrorKind(text: string): 'auth' | 'rate_limited' | 'overloaded' | undefined {
  if (
    /\b401\b|unauthori[sz]ed|unauthenticated|invalid[_ ]api[_ ]key|invalid x-api-key|api key not valid|incorrect api key|not logged in|codex login|authentication/i.test(
      text,
    )
  ) {
    return 'auth';
  }
  if (
    isUsageLimitText(text) ||
    /\b429\b|too many requests|rate[_ ]limit|usage[_ ]limit|quota|resource[_ ]exhausted/i.test(text)
  ) {
    return 'rate_limited';
  }
  if (/\b(?:503|529)\b|overloaded|service unavailable|capacity/i.test(text)) return 'overloaded';
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const EPOCH = /\|\s*(\d{9,13})\b/;
const DURATION =
  /(?:try again|resets?) in ((?:\d+\s*(?:days?|hours?|hrs?|minutes?|mins?|seconds?|secs?|[dhms])\b[\s,]*(?:and\s+)?)+)/i;
const CLOCK_TIME =
  /(?:resets?|reset at|try again at)\s+(?:at\s+)?(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(?:(\d{4}),?\s*)?(?:at\s+)?)?(\d{1,2})(?:(:\d{2})\s*([ap])\.?m\.?|(:\d{2})|\s*([ap])\.?m\.?)(?:\s*\(([^)]+)\))?/i;

/**
 * When the limit a message talks about resets, in epoch ms: `…|<epoch seconds>`, `resets in 2h 5m`,
 * `resets 3:45pm`, `resets Oct 9, 5pm (Europe/Paris)`, `try again at Sep 24th, 2025 3:45 PM`.
 * A clock time means its next occurrence, in the named time zone when one is given and valid,
 * otherwise in local time.
 */
export function parseResetTime(text: string, now: number): number | undefined {
  const epoch = EPOCH.exec(text);
  if (epoch?.[1] !== undefined) {
    const value = Number(epoch[1]);
    return value < 1e12 ? value * 1000 : value;
  }

  const duration = DURATION.exec(text);
  if (duration?.[1] !== undefined) {
    const ms = durationMs(duration[1]);
    if (ms > 0) return now + ms;
  }

  const clock = CLOCK_TIME.exec(text);
  if (clock === null) return undefined;
  const [
    ,
    monthName,
    dayText,
    yearText,
    hourText,
    minutesWithMeridiem,
    meridiemA,
    minutesOnly,
    meridiemB,
    zoneText,
  ] = clock;
  const minuteText = (minutesWithMeridiem ?? minutesOnly)?.slice(1);
  const meridiem = (meridiemA ?? meridiemB)?.toLowerCase();
  let hour = Number(hourText);
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  if (meridiem !== undefined) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (meridiem === 'p' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return undefined;
  const zone = zoneText !== undefined && isTimeZone(zoneText.trim()) ? zoneText.trim() : undefined;

  const today = wallDate(now, zone);
  if (monthName !== undefined && dayText !== undefined) {
    const month = MONTHS.indexOf(monthName.slice(0, 3).toLowerCase());
    const day = Number(dayText);
    if (yearText !== undefined) return wallTimeToEpoch(Number(yearText), month, day, hour, minute, zone);
    const thisYear = wallTimeToEpoch(today.year, month, day, hour, minute, zone);
    return thisYear > now ? thisYear : wallTimeToEpoch(today.year + 1, month, day, hour, minute, zone);
  }
  const todayAt = wallTimeToEpoch(today.year, today.month, today.day, hour, minute, zone);
  return todayAt > now
    ? todayAt
    : wallTimeToEpoch(today.year, today.month, today.day + 1, hour, minute, zone);
}

function durationMs(text: string): number {
  let total = 0;
  for (const match of text.matchAll(/(\d+)\s*([a-z]+)/gi)) {
    const unit = (match[2] ?? '').toLowerCase().charAt(0);
    const factor = unit === 'd' ? 86_400_000 : unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : 1000;
    total += Number(match[1]) * factor;
  }
  return total;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

interface WallDate {
  year: number;
  month: number;
  day: number;
}

function wallDate(at: number, zone: string | undefined): WallDate {
  if (zone === undefined) {
    const date = new Date(at);
    return { year: date.getFullYear(), month: date.getMonth(), day: date.getDate() };
  }
  const parts = zoneParts(at, zone);
  return { year: parts.year, month: parts.month - 1, day: parts.day };
}

/** Epoch ms of a wall-clock time (month 0-based; overflowing days roll over) in a zone or locally. */
function wallTimeToEpoch(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  zone?: string,
) {
  if (zone === undefined) return new Date(year, month, day, hour, minute).getTime();
  const asUtc = Date.UTC(year, month, day, hour, minute);
  const first = asUtc - zoneOffsetMs(asUtc, zone);
  const second = zoneOffsetMs(first, zone);
  return asUtc - second;
}

function zoneOffsetMs(at: number, zone: string): number {
  const p = zoneParts(at, zone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

function zoneParts(at: number, zone: string) {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const parts = format.formatToParts(new Date(at));
  const value = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  return {
    year: value('year'),
    month: value('month'),
    day: value('day'),
    hour: value('hour'),
    minute: value('minute'),
    second: value('second'),
  };
}

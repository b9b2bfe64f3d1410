// Usage-limit messages: recognised only when they are the message, and their reset time worked out.
import { describe, expect, it } from 'vitest';
import { isUsageLimitText, parseResetTime } from '../../src/agents/limits.js';

describe('isUsageLimitText', () => {
  it.each([
    'Claude AI usage limit reached|1760000000',
    'API Error: Claude AI usage limit reached|1760000000',
    "You've hit your limit · resets 3:45pm",
    'You’ve hit your weekly limit · resets Oct 9, 5pm',
    '5-hour limit reached ∙ resets 2pm',
    "🖐 You've hit your usage limit. Upgrade to Pro or try again in 2 hours.",
  ])('recognises %j', (text) => {
    expect(isUsageLimitText(text)).toBe(true);
  });

  it.each([
    "I fixed the banner that said 'Claude AI usage limit reached' too early.",
    'The log file contains: You have hit your limit · resets 3:45pm',
    'Done. Rate limiting now resets at midnight.',
  ])('ignores a message that merely mentions it: %j', (text) => {
    expect(isUsageLimitText(text)).toBe(false);
  });
});

describe('parseResetTime', () => {
  const at = (...parts: [number, number, number, number, number]) => new Date(...parts).getTime();
  const now = at(2026, 2, 10, 14, 0); // 10 March 2026, 14:00 local

  it('reads an epoch after the bar, in seconds or ms', () => {
    expect(parseResetTime('Claude AI usage limit reached|1760000000', now)).toBe(1_760_000_000_000);
    expect(parseResetTime('Claude AI usage limit reached|1760000000123', now)).toBe(1_760_000_000_123);
  });

  it('takes a clock time as its next occurrence in local time', () => {
    expect(parseResetTime("You've hit your limit · resets 3:45pm", now)).toBe(at(2026, 2, 10, 15, 45));
    expect(parseResetTime("You've hit your limit · resets 1pm", now)).toBe(at(2026, 2, 11, 13, 0));
    expect(parseResetTime('limit reached · resets 12am', now)).toBe(at(2026, 2, 11, 0, 0));
    expect(parseResetTime('limit reached · resets 12:30 PM', now)).toBe(at(2026, 2, 11, 12, 30));
    expect(parseResetTime('Your limit will reset at 15:45', now)).toBe(at(2026, 2, 10, 15, 45));
  });

  it('honours a named time zone', () => {
    const utcNoon = Date.UTC(2026, 6, 1, 12, 0);
    expect(parseResetTime('resets 3pm (UTC)', utcNoon)).toBe(Date.UTC(2026, 6, 1, 15, 0));
    // 3pm in New York in July is 19:00 UTC (EDT, UTC-4).
    expect(parseResetTime("You've hit your limit · resets 3pm (America/New_York)", utcNoon)).toBe(
      Date.UTC(2026, 6, 1, 19, 0),
    );
    // Tokyo is already past 3pm at noon UTC (21:00 there), so the next one is tomorrow.
    expect(parseResetTime('resets 3pm (Asia/Tokyo)', utcNoon)).toBe(Date.UTC(2026, 6, 2, 6, 0));
  });

  it('reads a date with the time', () => {
    expect(parseResetTime('weekly limit reached · resets Oct 9, 5pm (UTC)', Date.UTC(2026, 2, 10))).toBe(
      Date.UTC(2026, 9, 9, 17, 0),
    );
    expect(parseResetTime('try again at Sep 24th, 2025 3:45 PM.', now)).toBe(at(2025, 8, 24, 15, 45));
    expect(parseResetTime('resets Jan 2 at 9am', now)).toBe(at(2027, 0, 2, 9, 0));
  });

  it('adds a duration', () => {
    expect(parseResetTime('try again in 2 hours 5 minutes.', now)).toBe(now + 2 * 3_600_000 + 5 * 60_000);
    expect(parseResetTime('try again in 1 day, 3h and 10m', now)).toBe(
      now + 86_400_000 + 3 * 3_600_000 + 600_000,
    );
  });

  it('says nothing when the text has no reset time', () => {
    expect(parseResetTime('Claude AI usage limit reached', now)).toBeUndefined();
    expect(parseResetTime('resets soon', now)).toBeUndefined();
    expect(parseResetTime('resets 13pm', now)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { durationSeconds } from '../src/index.js';

describe('durationSeconds', () => {
  it.each([
    ['90', 90],
    ['90s', 90],
    ['15m', 900],
    ['1h', 3600],
    ['30d', 2_592_000],
    [' 2h ', 7200],
    ['0', 0],
  ])('reads %j as %d seconds', (text, seconds) => {
    expect(durationSeconds(text)).toBe(seconds);
  });

  it.each(['1.5h', '1w', '-5', 'h', '', '1h30m', '1000000000000s', '15 m'])('refuses %j', (text) => {
    expect(durationSeconds(text)).toBeUndefined();
  });
});

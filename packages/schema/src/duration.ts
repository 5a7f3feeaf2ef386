/** Seconds in each unit a duration may carry. */
const UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration as idgate reads it everywhere (settings, environment variables, CLI options): whole
 * seconds (`90`) or a whole number with a unit `s`, `m`, `h` or `d` (`90s`, `15m`, `1h`, `30d`), in
 * seconds; undefined for anything else (fractions, other units, more than 12 digits).
 * @example durationSeconds('15m') // 900
 */
export function durationSeconds(text: string): number | undefined {
  const match = /^(\d{1,12})([smhd]?)$/.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * (UNITS[match[2] || 's'] as number);
}

import { durationSeconds } from '@idgate/schema';
import { CliError } from './context.js';

/**
 * A duration as the CLI takes it — whole seconds (`90`) or a number with a unit `s`, `m`, `h` or
 * `d` (`90s`, `15m`, `1h`, `30d`) — in seconds.
 * @throws CliError naming `option` and what it accepts.
 * @example parseDuration('1h', '--grace-period') // 3600
 */
export function parseDuration(raw: string, option: string, options: { allowZero?: boolean } = {}): number {
  const seconds = durationSeconds(raw) ?? Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds < (options.allowZero ? 0 : 1))
    throw new CliError(
      `${option} ${JSON.stringify(raw)}: must be a ${options.allowZero ? 'whole' : 'positive whole'} number of seconds, or a number with a unit s, m, h or d (30d)`,
    );
  return seconds;
}

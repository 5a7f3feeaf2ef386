import { describe, expect, it } from 'vitest';
import { CreateUserInput, LIMITS, storedUserAgent, UpdateUserInput, UserGroups } from '../src/index.js';

const groups = (count: number) => Array.from({ length: count }, (_, i) => `g${i}`);

describe('the bounds on stored input', () => {
  it('cuts a user agent to its first 512 characters, and keeps a short one or none as it is', () => {
    const long = `Mozilla/5.0 ${'x'.repeat(1000)}`;
    expect(storedUserAgent(long)).toBe(long.slice(0, LIMITS.userAgentLength));
    expect(storedUserAgent(long)).toHaveLength(512);
    expect(storedUserAgent('curl/8.0')).toBe('curl/8.0');
    expect(storedUserAgent(undefined)).toBeNull();
    expect(storedUserAgent(null)).toBeNull();
  });

  it('refuses more than 200 distinct groups for a user, counting a repeated one once', () => {
    expect(UserGroups.parse([...groups(200), 'g0'])).toHaveLength(200);
    const refused = UserGroups.safeParse(groups(201));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/^must hold at most 200 groups/);
    expect(CreateUserInput.safeParse({ username: 'a', groups: groups(201) }).success).toBe(false);
    expect(UpdateUserInput.safeParse({ groups: groups(201) }).success).toBe(false);
    expect(UpdateUserInput.parse({ groups: groups(200) }).groups).toHaveLength(200);
  });
});

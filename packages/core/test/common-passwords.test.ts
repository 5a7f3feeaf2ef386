import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMON_PASSWORDS } from '../src/users/common-passwords.js';
import { passwordWeakness } from '../src/users/password-policy.js';

const script = fileURLToPath(new URL('../scripts/generate-common-passwords.mjs', import.meta.url));

describe('common-password list (NIST SP 800-63B §5.1.1.2)', () => {
  it('is what the script makes of data/common-passwords.txt', () => {
    // Exits non-zero, and so throws here, when the module differs from what the script would write.
    expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
  });

  it('holds only entries the policy refuses, in any case, at the lowest minimum length the server allows', () => {
    expect(COMMON_PASSWORDS.length).toBeGreaterThan(3000);
    // passwordPolicy.minLength goes no lower than 8 (the server's configuration refuses less).
    for (const entry of COMMON_PASSWORDS) {
      expect(passwordWeakness(entry, 'nobody', { minLength: 8 }), entry).toBe(
        'is one of the most common passwords',
      );
      expect(passwordWeakness(entry.toUpperCase(), 'nobody', { minLength: 8 }), entry).toBe(
        'is one of the most common passwords',
      );
    }
  });
});

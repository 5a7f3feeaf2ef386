import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { AuthorizationRequestForm, FormReader, LogoutRequestForm, PkceValue } from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('FormReader', () => {
  const Form = z.object({
    name: z.string(),
    mode: z.optional(z.literal('fast', { error: 'only mode=fast is supported' })),
    tag: z.optional(z.union([z.string(), z.array(z.string())])),
    size: z.optional(z.string().check(z.maxLength(3, 'size is too long'))),
  });

  it("reads each field with the schema's entry for it", () => {
    const form = new FormReader(Form, { name: 'a', mode: 'fast', tag: ['x', 'y'], other: 'ignored' });
    expect(form.field('name')).toEqual({ ok: true, value: 'a' });
    expect(form.field('mode')).toEqual({ ok: true, value: 'fast' });
    expect(form.field('tag')).toEqual({ ok: true, value: ['x', 'y'] });
    expect(form.field('size')).toEqual({ ok: true, value: undefined });
  });

  it('says what is wrong with a field: missing, repeated, or the schema refuses the value', () => {
    const form = new FormReader(Form, { mode: ['fast', 'fast'], size: 'long', tag: ['x', 'y'] });
    expect(form.field('name')).toEqual({
      ok: false,
      problem: 'missing',
      description: 'name is required',
      sent: undefined,
    });
    expect(form.field('mode')).toEqual({
      ok: false,
      problem: 'repeated',
      description: 'parameter mode must not be repeated',
      sent: ['fast', 'fast'],
    });
    expect(form.field('size')).toMatchObject({
      ok: false,
      problem: 'invalid',
      description: 'size is too long',
    });
    expect(new FormReader(Form, { mode: 'slow' }).field('mode')).toMatchObject({
      problem: 'invalid',
      description: 'only mode=fast is supported',
      sent: 'slow',
    });
  });

  it('takes a blank value as absent only when asked to, and never a repeated one', () => {
    expect(new FormReader(Form, { name: '' }).field('name')).toEqual({ ok: true, value: '' });
    const blanks = new FormReader(Form, { name: '', mode: ['', 'fast'] }, { blankIsAbsent: true });
    expect(blanks.field('name')).toMatchObject({ ok: false, problem: 'missing' });
    expect(blanks.sent('name')).toBeUndefined();
    expect(blanks.field('mode')).toMatchObject({ ok: false, problem: 'repeated' });
  });

  it('reads only what was sent, not what an object inherits', () => {
    const values = Object.create({ name: 'inherited' }) as Record<string, string>;
    expect(new FormReader(Form, values).field('name')).toMatchObject({ ok: false, problem: 'missing' });
  });
});

describe('authorization request parameters (RFC 6749 §4.1.1, OIDC Core §3.1.2.1)', () => {
  const minimal = { response_type: 'code', client_id: 'app', redirect_uri: 'https://app.example/cb' };

  it('takes the minimal request and every parameter idgate reads', () => {
    expect(AuthorizationRequestForm.parse(minimal)).toEqual(minimal);
    const full = {
      ...minimal,
      scope: 'openid groups',
      state: 's'.repeat(2048),
      nonce: 'n'.repeat(512),
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      response_mode: 'query',
      prompt: 'login consent',
      max_age: '123456789',
      login_hint: 'alice',
      resource: ['https://a.example', 'https://b.example'],
    };
    expect(AuthorizationRequestForm.parse(full)).toEqual(full);
  });

  it.each([
    ['response_type', { response_type: 'token' }],
    ['client_id', { client_id: undefined }],
    ['redirect_uri', { redirect_uri: undefined }],
    ['state', { state: 's'.repeat(2049) }],
    ['nonce', { nonce: 'n'.repeat(513) }],
    ['code_challenge', { code_challenge: 'short' }],
    ['code_challenge_method', { code_challenge_method: 'S512' }],
    ['response_mode', { response_mode: 'fragment' }],
    ['max_age', { max_age: '1234567890' }],
    ['max_age', { max_age: '-1' }],
    ['scope', { scope: ['openid', 'groups'] }],
  ])('refuses %s in %j', (field, change) => {
    expect(rejectedAt(AuthorizationRequestForm, { ...minimal, ...change })).toEqual([field]);
  });

  it('words each refusal as the endpoint answers it', () => {
    const described = (change: Record<string, unknown>) =>
      AuthorizationRequestForm.safeParse({ ...minimal, ...change }).error?.issues[0]?.message;
    expect(described({ response_type: 'token' })).toBe('only response_type=code is supported');
    expect(described({ state: 's'.repeat(2049) })).toBe('state is too long');
    expect(described({ code_challenge_method: 'S512' })).toBe('code_challenge_method must be S256');
    expect(described({ max_age: 'x' })).toBe('max_age must be a non-negative integer');
  });
});

describe('PKCE values (RFC 7636 §4.1, §4.2)', () => {
  it("takes a verifier or challenge of 43 to 128 unreserved characters, RFC 7636's own example among them", () => {
    for (const value of [
      'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      CHALLENGE,
      `${'a'.repeat(124)}-._~`,
      'Z9'.repeat(64),
    ])
      expect(PkceValue.safeParse(value).success, value).toBe(true);
  });

  it('refuses one too short, too long, or with a character outside [A-Za-z0-9._~-]', () => {
    for (const value of ['a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(42)}+`, `${'a'.repeat(42)}=`, ''])
      expect(PkceValue.safeParse(value).success, value).toBe(false);
  });

  it('is the form the authorization request holds code_challenge to', () => {
    const minimal = { response_type: 'code', client_id: 'app', redirect_uri: 'https://app.example/cb' };
    for (const value of [CHALLENGE, 'a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(43)}/`])
      expect(AuthorizationRequestForm.safeParse({ ...minimal, code_challenge: value }).success).toBe(
        PkceValue.safeParse(value).success,
      );
  });
});

describe('RP-initiated logout parameters (OIDC RP-Initiated Logout 1.0 §2)', () => {
  it('takes none, or all four', () => {
    expect(LogoutRequestForm.parse({})).toEqual({});
    const all = {
      id_token_hint: 'eyJ.x.y',
      post_logout_redirect_uri: 'https://app.example/bye',
      state: 's',
      client_id: 'app',
    };
    expect(LogoutRequestForm.parse(all)).toEqual(all);
  });

  it('refuses a repeated parameter', () => {
    expect(rejectedAt(LogoutRequestForm, { state: ['a', 'b'] })).toEqual(['state']);
  });
});

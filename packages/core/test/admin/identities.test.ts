import { CreateUserInput, type IdentityProviderConfigInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { linkIdentity, listUserIdentities, unlinkIdentity } from '../../src/admin/identities.js';
import { addIdentityProvider } from '../../src/admin/identity-providers.js';
import { createUser } from '../../src/admin/users.js';
import { linkedIdentityView } from '../../src/admin/views.js';
import { adminPorts, rejection } from './ports.js';

const GITHUB = { type: 'github', name: 'github', clientId: 'x', clientSecret: 's' } as const;

async function withUsersAndProvider(provider: IdentityProviderConfigInput = GITHUB) {
  const ports = adminPorts();
  for (const username of ['alice', 'bob']) await createUser(ports, CreateUserInput.parse({ username }));
  await addIdentityProvider(ports, provider);
  return ports;
}

describe('linking an identity', () => {
  it('links a subject of a stored provider (any case) to a user, unknown until its first sign-in', async () => {
    const ports = await withUsersAndProvider();
    const { identity, user } = await linkIdentity(ports, {
      username: 'Alice',
      provider: 'GitHub',
      subject: '583231',
    });
    expect(linkedIdentityView(identity)).toEqual({
      provider: 'github',
      subject: '583231',
      userId: user.id,
      username: '583231',
      email: null,
      groups: [],
      linkedAt: '2026-11-21T10:00:00.000Z',
      lastLoginAt: null,
    });
    expect((await listUserIdentities(ports, 'ALICE')).identities).toStrictEqual([identity]);
  });

  it('refuses a subject linked already, naming the user it is linked to', async () => {
    const ports = await withUsersAndProvider();
    await linkIdentity(ports, { username: 'alice', provider: 'github', subject: '1' });
    const error = await rejection(linkIdentity(ports, { username: 'bob', provider: 'github', subject: '1' }));
    expect(error).toMatchObject({
      code: 'conflict',
      object: 'identity',
      message: 'github subject 1 is linked already, to user alice',
    });
  });

  it('refuses an unknown user or provider', async () => {
    const ports = await withUsersAndProvider();
    expect(
      await rejection(linkIdentity(ports, { username: 'nobody', provider: 'github', subject: '1' })),
    ).toMatchObject({ code: 'not_found', object: 'user', message: 'no user nobody' });
    expect(
      await rejection(linkIdentity(ports, { username: 'alice', provider: 'corp', subject: '1' })),
    ).toMatchObject({
      code: 'not_found',
      object: 'identity_provider',
      message: 'no identity provider corp in the database',
    });
  });
});

describe('listing and unlinking identities', () => {
  it('lists by provider then subject, and unlinks only from the user it is linked to', async () => {
    const ports = await withUsersAndProvider();
    await addIdentityProvider(ports, { ...GITHUB, type: 'gitlab', name: 'gitlab' });
    for (const [provider, subject] of [
      ['gitlab', '9'],
      ['github', '2'],
      ['github', '1'],
    ] as const)
      await linkIdentity(ports, { username: 'alice', provider, subject });
    const { identities: listed } = await listUserIdentities(ports, 'alice');
    expect(listed.map((i) => `${i.provider}/${i.subject}`)).toEqual(['github/1', 'github/2', 'gitlab/9']);

    const wrong = await rejection(
      unlinkIdentity(ports, { username: 'bob', provider: 'github', subject: '1' }),
    );
    expect(wrong).toMatchObject({ code: 'not_found', message: 'user bob has no github identity 1' });
    const { identity } = await unlinkIdentity(ports, { username: 'alice', provider: 'GitHub', subject: '1' });
    expect(identity.subject).toBe('1');
    expect((await listUserIdentities(ports, 'alice')).identities.map((i) => i.subject)).toEqual(['2', '9']);
  });

  it('refuses an unknown user', async () => {
    const ports = await withUsersAndProvider();
    expect(await rejection(listUserIdentities(ports, 'nobody'))).toMatchObject({ code: 'not_found' });
    expect(await rejection(listUserIdentities(ports, 'x'.repeat(129)))).toMatchObject({
      code: 'not_found',
      object: 'user',
    });
  });
});

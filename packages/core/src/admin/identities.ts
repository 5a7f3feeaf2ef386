import type { LinkIdentityInput } from '@idgate/schema';
import { recordAdminChange } from '../audit/admin.js';
import type { LinkedIdentityRecord, UserRecord } from '../model.js';
import { AdminError, refusingConflicts } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';
import { findUser } from './users.js';

/**
 * Links an external identity (its subject at a stored identity provider) to a local user, as
 * `manual` mapping needs. What the provider says about it (username, email, groups) is unknown
 * until the first sign-in records it.
 * @throws AdminError `not_found` for an unknown user or provider; `conflict` when the subject is
 * linked already (the message names the user it is linked to).
 * @example await linkIdentity(ports, LinkIdentityInput.parse({ username: 'alice', provider: 'github', subject: '583231' }));
 */
export async function linkIdentity(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  input: LinkIdentityInput,
): Promise<{ user: UserRecord; identity: LinkedIdentityRecord }> {
  const { storage } = ports;
  const user = await findUser(storage, input.username);
  const provider = await storage.identityProviders.findByName(input.provider);
  if (provider === undefined)
    throw new AdminError(
      'not_found',
      'identity_provider',
      `no identity provider ${input.provider} in the database`,
      { key: input.provider },
    );
  const { subject } = input;
  // The refusal reads outside the transaction: on PostgreSQL a conflict ends the transaction's use.
  const identity = await refusingConflicts(
    () =>
      storage.transaction(async (tx) => {
        const linked = await tx.identities.link({
          provider: provider.name,
          subject,
          userId: user.id,
          // Unknown until the first sign-in, which records the provider's username, email and groups.
          username: subject,
          email: null,
          groups: [],
          linkedAt: nowOf(ports),
          lastLoginAt: null,
        });
        await recordIdentityChange(tx, ports, user, linked, 'link');
        return linked;
      }),
    async () => {
      const existing = await storage.identities.find(provider.name, subject);
      const owner = existing && (await storage.users.findById(existing.userId));
      const to = owner === undefined ? '' : `, to user ${owner.username}`;
      return new AdminError(
        'conflict',
        'identity',
        `${provider.name} subject ${subject} is linked already${to}`,
        {
          key: subject,
        },
      );
    },
  );
  return { user, identity };
}

/**
 * A user and their linked identities, by provider then subject.
 * @throws AdminError `not_found` for an unknown user.
 * @example const { identities } = await listUserIdentities(ports, 'alice');
 */
export async function listUserIdentities(
  ports: Pick<AdminPorts, 'storage'>,
  username: string,
): Promise<{ user: UserRecord; identities: LinkedIdentityRecord[] }> {
  const user = await findUser(ports.storage, username);
  return { user, identities: await ports.storage.identities.listByUser(user.id) };
}

/**
 * Removes the link between a user and an external identity (the provider's name in any case).
 * @throws AdminError `not_found` for an unknown user, or an identity not linked to that user.
 * @example await unlinkIdentity(ports, { username: 'alice', provider: 'github', subject: '583231' });
 */
export function unlinkIdentity(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  input: LinkIdentityInput,
): Promise<{ user: UserRecord; identity: LinkedIdentityRecord }> {
  const provider = input.provider.toLowerCase();
  return ports.storage.transaction(async (tx) => {
    const user = await findUser(tx, input.username);
    const identity = await tx.identities.find(provider, input.subject);
    if (identity?.userId !== user.id)
      throw new AdminError(
        'not_found',
        'identity',
        `user ${user.username} has no ${provider} identity ${input.subject}`,
        { key: input.subject },
      );
    await tx.identities.unlink(provider, input.subject);
    await recordIdentityChange(tx, ports, user, identity, 'unlink');
    return { user, identity };
  });
}

function recordIdentityChange(
  storage: AdminPorts['storage'],
  ports: Pick<AdminPorts, 'clock' | 'auditActor'>,
  user: UserRecord,
  identity: LinkedIdentityRecord,
  operation: 'link' | 'unlink',
): Promise<void> {
  const fields = { provider: identity.provider, subject: identity.subject, userId: user.id };
  return recordAdminChange(storage, ports, {
    objectKind: 'identity',
    objectId: `${identity.provider}:${identity.subject}`,
    action: operation === 'link' ? 'created' : 'deleted',
    operation,
    subject: user.id,
    before: operation === 'link' ? null : fields,
    after: operation === 'link' ? fields : null,
  });
}

import type { FactorRecord, WebAuthnChallengeRecord } from '../model.js';
import { type FactorRepository, StorageConflictError } from './storage.js';

/** The factor tables of the in-memory storage. */
export interface FactorTables {
  factors: Map<string, FactorRecord>;
  /** Keyed by `userId:hash`; the value is when the code was used, null while unused. */
  recoveryCodes: Map<string, { userId: string; usedAt: Date | null }>;
  mfaRequired: Set<string>;
  webauthnChallenges: Map<string, WebAuthnChallengeRecord>;
}

export function emptyFactorTables(): FactorTables {
  return {
    factors: new Map(),
    recoveryCodes: new Map(),
    mfaRequired: new Set(),
    webauthnChallenges: new Map(),
  };
}

const copy = <T>(value: T): T => structuredClone(value);

export function createMemoryFactorRepository(tables: () => FactorTables): { factors: FactorRepository } {
  const own = (userId: string, id: string) => {
    const factor = tables().factors.get(id);
    return factor?.userId === userId ? factor : undefined;
  };
  return {
    factors: {
      async list(userId) {
        return copy(
          [...tables().factors.values()]
            .filter((f) => f.userId === userId)
            .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)),
        );
      },
      async findById(userId, id) {
        return copy(own(userId, id));
      },
      async create(factor) {
        const all = [...tables().factors.values()];
        if (tables().factors.has(factor.id)) throw new StorageConflictError('id');
        if (all.some((f) => f.userId === factor.userId && f.name === factor.name))
          throw new StorageConflictError('name');
        if (factor.credentialId !== null && all.some((f) => f.credentialId === factor.credentialId))
          throw new StorageConflictError('credentialId');
        tables().factors.set(factor.id, copy(factor));
        return copy(factor);
      },
      async confirm(userId, id, step, at) {
        const factor = own(userId, id);
        if (factor === undefined || factor.confirmedAt !== null) return false;
        factor.confirmedAt = new Date(at);
        factor.lastUsedStep = step;
        factor.lastUsedAt = new Date(at);
        return true;
      },
      async useStep(userId, id, step, at) {
        const factor = own(userId, id);
        if (factor === undefined || factor.confirmedAt === null) return false;
        if (factor.lastUsedStep !== null && factor.lastUsedStep >= step) return false;
        factor.lastUsedStep = step;
        factor.lastUsedAt = new Date(at);
        return true;
      },
      async findByCredentialId(credentialId) {
        return copy([...tables().factors.values()].find((f) => f.credentialId === credentialId));
      },
      async useSignCount(userId, id, previous, next, at) {
        const factor = own(userId, id);
        if (factor === undefined || factor.confirmedAt === null || factor.lastUsedStep !== previous)
          return false;
        factor.lastUsedStep = next;
        factor.lastUsedAt = new Date(at);
        return true;
      },
      async remove(userId, id) {
        return own(userId, id) !== undefined && tables().factors.delete(id);
      },
      async removeAll(userId) {
        let removed = 0;
        for (const [id, factor] of tables().factors)
          if (factor.userId === userId && tables().factors.delete(id)) removed++;
        for (const [key, code] of tables().recoveryCodes)
          if (code.userId === userId) tables().recoveryCodes.delete(key);
        return removed;
      },
      async replaceRecoveryCodes(userId, hashes) {
        for (const [key, code] of tables().recoveryCodes)
          if (code.userId === userId) tables().recoveryCodes.delete(key);
        for (const hash of hashes) tables().recoveryCodes.set(`${userId}:${hash}`, { userId, usedAt: null });
      },
      async useRecoveryCode(userId, hash, at) {
        const code = tables().recoveryCodes.get(`${userId}:${hash}`);
        if (code === undefined || code.usedAt !== null) return false;
        code.usedAt = new Date(at);
        return true;
      },
      async recoveryCodesLeft(userId) {
        return [...tables().recoveryCodes.values()].filter((c) => c.userId === userId && c.usedAt === null)
          .length;
      },
      async setRequired(userId, required) {
        if (required) tables().mfaRequired.add(userId);
        else tables().mfaRequired.delete(userId);
      },
      async isRequired(userId) {
        return tables().mfaRequired.has(userId);
      },
      async saveChallenge(challenge, now) {
        const challenges = tables().webauthnChallenges;
        for (const [id, c] of challenges) if (c.expiresAt.getTime() <= now.getTime()) challenges.delete(id);
        challenges.set(challenge.id, copy(challenge));
      },
      async takeChallenge(id) {
        const challenges = tables().webauthnChallenges;
        const challenge = challenges.get(id);
        challenges.delete(id);
        return copy(challenge);
      },
    },
  };
}

import { initializeStorage } from '../src/admin.js';
import { systemClock } from '../src/index.js';
import { createMemoryStorage, insecureTestPasswordHasher } from '../src/testing.js';

// Core's use cases run over ports: storage, clock, password hasher. The server passes SQL storage
// and argon2id; here the in-memory ones stand in.
const created = await initializeStorage(
  {
    storage: createMemoryStorage(),
    clock: systemClock,
    hasher: insecureTestPasswordHasher(),
    lifetimes: { accessTokenTtl: 3600, refreshTokenTtl: 2_592_000, maxAccessTokenTtl: 86_400 },
  },
  { adminUsername: 'admin' },
);
console.log(created.admin.user.username, created.apiKey.key, created.client.client.clientId);

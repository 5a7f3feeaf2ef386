import { en } from 'zod/locales';
import { config } from 'zod/mini';

// @idgate/schema loads no zod locale (that would be a side effect in every bundle of the SDK); the
// server gets zod's English messages from its own zod import, and these tests read them too.
config(en());

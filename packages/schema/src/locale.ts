import { en } from 'zod/locales';
import { config } from 'zod/mini';

// zod/mini, unlike zod, loads no locale: without one every issue reads "Invalid input". The
// messages idgate's 400s, CLI and SDK errors quote are zod's English ones, so load those, unless
// the application has chosen a locale of its own. This module is the package's one side effect
// (listed in package.json "sideEffects"): everything else tree-shakes.
if (config().localeError === undefined) config(en());

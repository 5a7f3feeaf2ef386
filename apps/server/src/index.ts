export { type BuildAppOptions, buildApp } from './app.js';
export { runCli } from './cli/program.js';
export { baseUrlOf, ConfigError, type IdgateConfig, type IdgateConfigInput, loadConfig } from './config.js';
export { type AppContext, type AppContextOptions, createAppContext, type RunningContext } from './context.js';
export { readDeclarationFiles } from './declarations.js';
export { argon2idHasher } from './password-hasher.js';
export { type RunningServer, startServer } from './serve.js';
export { openServices, resolveSecret, type Services, type StartupLogger } from './services.js';

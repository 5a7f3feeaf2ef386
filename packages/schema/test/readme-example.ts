import { describeFirstIssue, ProviderMetadata, Username } from '../src/index.js';

// Every wire object is a zod 4 schema and the type it checks.
const metadata: ProviderMetadata = ProviderMetadata.parse(
  await (await fetch('http://localhost:8080/oauth/.well-known/openid-configuration')).json(),
);
console.log(metadata.issuer, metadata.token_endpoint);

// Refusals name the field, the value and what it accepts.
const result = Username.safeParse('no spaces');
if (!result.success)
  console.error(describeFirstIssue(result.error, { label: () => 'username', input: 'no spaces' }));

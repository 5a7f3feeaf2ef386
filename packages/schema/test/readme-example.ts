import { describeFirstIssue, TokenResponse, Username } from '../src/index.js';

// Every wire object is a zod 4 schema and the type it checks.
const tokens: TokenResponse = TokenResponse.parse(
  await (await fetch('http://localhost:8080/oauth/token', { method: 'POST' })).json(),
);
console.log(tokens.token_type, tokens.expires_in);

// Refusals name the field, the value and what it accepts.
const result = Username.safeParse('no spaces');
if (!result.success)
  console.error(describeFirstIssue(result.error, { label: () => 'username', input: 'no spaces' }));

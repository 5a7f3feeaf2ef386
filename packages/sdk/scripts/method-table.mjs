#!/usr/bin/env node
// The method tables of the README, made from the clients' interfaces in src/: each method with its
// signature as written there, and the first sentence of its TSDoc. `test/readme.test.ts` checks that
// the README holds exactly these tables; after changing a client's methods, run
//
//   pnpm --filter @idgate/sdk run readme        (node scripts/method-table.mjs --write)
//
// which rewrites the README between the `<!-- methods:NAME -->` and `<!-- /methods:NAME -->` lines.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SDK = fileURLToPath(new URL('..', import.meta.url));
export const README = `${SDK}README.md`;

/** The interfaces tabled, by what `src/index.ts` exports, and `functions`: the README's markers name them. */
export const CLIENTS = ['IdgateClient', 'IdgateAdminClient', 'NativeClient'];

/**
 * Each client's methods as README table rows, in declaration order.
 * @returns {Record<string, Array<{ name: string, signature: string, summary: string }>>}
 */
export function clientMethods() {
  const program = ts.createProgram([`${SDK}src/index.ts`], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noResolve: false,
    types: [],
  });
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(`${SDK}src/index.ts`);
  const moduleSymbol = index && checker.getSymbolAtLocation(index);
  if (!moduleSymbol) throw new Error('cannot read src/index.ts');
  const exported = checker.getExportsOfModule(moduleSymbol);
  /** @type {Record<string, Array<{ name: string, signature: string, summary: string }>>} */
  const tables = {};
  for (const client of CLIENTS) {
    let symbol = exported.find((s) => s.name === client);
    if (!symbol) throw new Error(`src/index.ts exports no ${client}`);
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const rows = [];
    for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
      for (const declaration of member.declarations ?? []) {
        if (!ts.isMethodSignature(declaration) && !ts.isPropertySignature(declaration)) continue;
        rows.push({
          name: member.name,
          signature: signatureOf(declaration),
          summary: firstSentence(ts.displayPartsToString(member.getDocumentationComment(checker))),
        });
      }
    }
    tables[client] = rows;
  }
  // the functions the package exports (the clients' factories among them), by name
  tables.functions = exported
    .map((symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol))
    .filter((symbol) => symbol.flags & ts.SymbolFlags.Function)
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((symbol) =>
      (symbol.declarations ?? []).filter(ts.isFunctionDeclaration).map((declaration) => ({
        name: symbol.name,
        signature: signatureOf(declaration),
        summary: firstSentence(ts.displayPartsToString(symbol.getDocumentationComment(checker))),
      })),
    );
  return tables;
}

const printer = ts.createPrinter({ removeComments: true });

/** The member or function as written, without its TSDoc or body, on one line. */
function signatureOf(node) {
  const bare = ts.isFunctionDeclaration(node)
    ? ts.factory.updateFunctionDeclaration(
        node,
        undefined,
        node.asteriskToken,
        node.name,
        node.typeParameters,
        node.parameters,
        node.type,
        undefined,
      )
    : node;
  return printer
    .printNode(ts.EmitHint.Unspecified, bare, node.getSourceFile())
    .replace(/\s+/g, ' ')
    .replace(/;$/, '')
    .replace(/^function /, '')
    .replace(/\{ /g, '{ ')
    .replace(/; \}/g, ' }');
}

function firstSentence(doc) {
  const text = doc
    .replace(/\{@link\s+([^}|\s]+)[^}]*\}/g, '`$1`')
    .replace(/\s+/g, ' ')
    .trim();
  const end = text.search(/(?<!\b(?:i\.e|e\.g))\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

const cell = (text) => text.replaceAll('|', '\\|');

/** The markdown table of one client. */
export function methodTable(rows, heading = 'Method') {
  return [
    `| ${heading} | What it does |`,
    '| --- | --- |',
    ...rows.map((row) => `| \`${cell(row.signature)}\` | ${cell(row.summary)} |`),
  ].join('\n');
}

/** `readme` with each client's table between its markers, replaced. */
export function withTables(readme, tables = clientMethods()) {
  let text = readme;
  for (const [client, rows] of Object.entries(tables)) {
    const start = `<!-- methods:${client} -->`;
    const end = `<!-- /methods:${client} -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from === -1 || to < from) throw new Error(`README.md has no ${start} … ${end} section`);
    text = `${text.slice(0, from + start.length)}\n${methodTable(rows, client === 'functions' ? 'Function' : 'Method')}\n${text.slice(to)}`;
  }
  return text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const readme = readFileSync(README, 'utf8');
    const updated = withTables(readme);
    writeFileSync(README, updated);
    console.log(
      updated === readme
        ? 'README.md: the method tables were up to date'
        : 'README.md: method tables rewritten',
    );
  } else {
    process.stdout.write(
      Object.entries(clientMethods())
        .map(([c, rows]) => `${c}\n${methodTable(rows)}\n`)
        .join('\n'),
    );
  }
}

// The package's TypeScript declarations against the code that reads options and exports
// methods: every option `read_options` reads (crates/client/src/js/options.rs) is a member of
// `ClientOptions` or `RetryPolicy`, and every method of the exported class
// (crates/client/src/js/client.rs) is declared on `IdempotentClient`, in the built
// target/sdk-pkg/idem_client.d.ts. The other direction (the declarations promise nothing the
// code lacks) is examples/checkout/typescript, compiled by `make test` and run as example.spec.ts.
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';

const read = (path: string) => readFileSync(path, 'utf8');

/** The body of `export interface NAME { ... }` in `dts`. */
function declared(dts: string, name: string): string {
  const at = dts.indexOf(`export interface ${name} `);
  expect(at, `interface ${name} declared`).toBeGreaterThanOrEqual(0);
  return dts.slice(at, dts.indexOf('\n}', at));
}

test('every option the code reads is declared', () => {
  const options = read('crates/client/src/js/options.rs');
  const dts = read('target/sdk-pkg/idem_client.d.ts');
  const names = (re: RegExp) => [...options.matchAll(re)].map((m) => m[1]);
  const top = names(/(?:member|boolean)\(options, "(\w+)"/g);
  const policy = [...names(/(?:member|boolean)\(&p, "(\w+)"/g), ...names(/\bms\("(\w+)"/g)];
  expect(top).toEqual(expect.arrayContaining(['endpoint', 'keyStateUrl', 'policy']));
  expect(policy).toEqual(expect.arrayContaining(['initialBackoffMs', 'maxAttempts']));
  const clientOptions = declared(dts, 'ClientOptions');
  for (const name of top) expect(clientOptions, `ClientOptions.${name}`).toMatch(new RegExp(`\\n\\s+${name}\\??:`));
  const retryPolicy = declared(dts, 'RetryPolicy');
  for (const name of policy) expect(retryPolicy, `RetryPolicy.${name}`).toMatch(new RegExp(`\\n\\s+${name}\\??:`));
});

test('every method the class exports is declared', () => {
  const client = read('crates/client/src/js/client.rs');
  const dts = read('target/sdk-pkg/idem_client.d.ts');
  const start = client.indexOf('#[wasm_bindgen]\nimpl IdempotentClient {');
  const exported = client.slice(start, client.indexOf('\n}\n', start));
  const methods = [...exported.matchAll(/(?:js_name = (\w+)\)\]\s*)?pub fn (\w+)/g)].map(
    ([, jsName, name]) => jsName ?? name.replace(/_(\w)/g, (_, c) => c.toUpperCase()),
  );
  expect(methods).toEqual(expect.arrayContaining(['new', 'submit', 'reconcile', 'hasWebLocks']));
  const cls = dts.slice(dts.indexOf('export class IdempotentClient'), dts.indexOf('\n}', dts.indexOf('export class IdempotentClient')));
  for (const method of methods) {
    const signature = method === 'new' ? 'constructor(options: ClientOptions)' : `${method}(`;
    expect(cls, `IdempotentClient.${method}`).toContain(signature);
  }
});

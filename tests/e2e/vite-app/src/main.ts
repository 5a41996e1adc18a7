// A checkout page as an embedder writes it with a bundler: the packed idem-client installed from
// its tarball, imported by name, initialised at top level, strict TypeScript against its
// declarations. The server and the tenant come from the URL (`?server=…&token=…`), so the spec
// can point it at an idem-server on a free port.
import init, { IdempotentClient, type Outcome } from 'idem-client';

await init();
const query = new URLSearchParams(location.search);
const client = new IdempotentClient({
  endpoint: `${query.get('server') ?? 'http://127.0.0.1:8000'}/api/checkout`,
  headers: { Authorization: `Bearer ${query.get('token') ?? 'token-a'}` },
  policy: { initialBackoffMs: 200, attemptTimeoutMs: 1_000 },
});

const shown = document.querySelector<HTMLParagraphElement>('#outcome')!;
function show(outcome: Outcome): void {
  shown.dataset.kind = outcome.kind;
  shown.dataset.key = outcome.key ?? '';
  shown.dataset.attempts = String(outcome.attempts);
  shown.textContent = `${outcome.name}: ${outcome.kind} ${outcome.status ?? ''}`;
}

// After a reload: finish what was pending, under the same key.
for (const op of client.pending()) {
  if (op.status === 'pending') {
    const resumed = await client.resume(op.name);
    if (resumed) show(resumed);
  }
}

const pay = document.querySelector<HTMLButtonElement>('#pay')!;
pay.addEventListener('click', async () => {
  shown.dataset.kind = 'paying';
  show(await client.submit('checkout:cart-vite', { cart: 'cart-vite', amount: 1299, card: 'tok_visa' }));
});
// Pay works from now on (a click while the module still loaded would have done nothing).
pay.disabled = false;

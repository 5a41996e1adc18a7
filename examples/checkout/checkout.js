// One idempotency key per checkout, written to localStorage before the first request and sent
// on every retry (a lost answer, a reload, a double click): PayCo charges the card once.
import init, { IdempotentClient } from './idem-client/idem_client.js';

// Where idem-server runs (`make serve`: http://127.0.0.1:8000) and which tenant we are there.
const params = new URLSearchParams(location.search);
const api = params.get('api') ?? 'http://127.0.0.1:8000';
const token = params.get('token') ?? 'token-a';
const cart = params.get('cart') ?? 'cart-42';

await init();
const client = new IdempotentClient({
  endpoint: `${api}/api/checkout`,
  headers: { Authorization: `Bearer ${token}` },
});
const pay = document.querySelector('#pay');
const status = document.querySelector('#status');

function show(outcome) {
  if (outcome.kind === 'succeeded' || outcome.kind === 'replayed') {
    status.textContent = `Paid: order ${outcome.body.order}`;
  } else if (outcome.kind === 'rejected') {
    status.textContent = `Not paid: ${outcome.problem?.detail ?? outcome.status}`;
  } else {
    status.textContent = 'We could not confirm your payment yet; we will check and tell you.';
    client.reconcile(outcome.name).then((r) => r?.reconciled === 'done' && show(r));
  }
}

pay.addEventListener('click', async () => {
  status.textContent = 'Paying…';
  show(await client.submit(`checkout:${cart}`, { cart, amount: 1299, card: 'tok_visa' }));
});
// Reloaded while paying: finish that payment, under its key.
for (const op of client.pending()) if (op.status === 'pending') client.resume(op.name).then(show);
pay.disabled = false;

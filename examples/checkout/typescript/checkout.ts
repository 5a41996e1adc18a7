// The example checkout in TypeScript, using every method and option of the SDK's declarations:
// compiled (not run) by `make test` with `tsc --noEmit` against `idem_client.d.ts`.
import init, {
  IdempotentClient,
  type ClientOptions,
  type IdempotencyError,
  type JournalChange,
  type Outcome,
  type PendingOperation,
  type Reconciliation,
  type RetryPolicy,
  type SettledOperation,
} from 'idem-client';

const policy: RetryPolicy = {
  initialBackoffMs: 500,
  maxBackoffMs: 5_000,
  jitter: true,
  attemptTimeoutMs: 10_000,
  retryWindowMs: 24 * 60 * 60 * 1000,
  maxAttempts: null,
};

const options: ClientOptions = {
  endpoint: 'http://127.0.0.1:8000/api/checkout',
  method: 'POST',
  alwaysKey: false,
  policy: { attemptTimeoutMs: policy.attemptTimeoutMs },
  storagePrefix: 'shop:',
  allowMemoryOnly: false,
  headers: { Authorization: 'Bearer token-a' },
  settleWithoutLocksMs: 100,
  keyStateUrl: 'http://127.0.0.1:8000/api/keys/{key}',
};

function describe(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'succeeded':
    case 'replayed':
      return `paid (${outcome.status}, key ${outcome.key}, ${outcome.attempts} attempts, ${outcome.durability})`;
    case 'rejected':
      return `refused: ${outcome.problem?.detail ?? outcome.status}`;
    case 'unknown':
      return `unknown: ${outcome.lastError ?? 'no error kept'}`;
  }
}

function explain(reconciled: Reconciliation): string {
  switch (reconciled.reconciled) {
    case 'done':
      return describe(reconciled);
    case 'inFlight':
      return `still running (${reconciled.leaseAgeMs} ms old, ${reconciled.leaseLeftMs} ms left)`;
    case 'released':
      return 'released: nothing was saved; resume sends it again under the same key';
    case 'notFound':
      return 'never reached the server';
    case 'keyExpired':
      return 'the server no longer remembers this key and refused to run it again: check the order before paying again';
    case 'anotherRequest':
      return `another cart holds this key: this one never ran (${describe(reconciled)})`;
  }
}

export async function checkout(cart: string): Promise<string> {
  await init();
  const client = new IdempotentClient(options);
  const locks: boolean = IdempotentClient.hasWebLocks();
  const stop: () => void = client.watch((change: JournalChange) => {
    const record: PendingOperation | null = change.record;
    const settled: SettledOperation | null = change.settled;
    console.log(change.name, record?.status, settled?.expiresAt);
  });
  try {
    for (const op of client.pending()) {
      if (op.status === 'pending') {
        const resumed: Outcome | null = await client.resume(op.name);
        if (resumed) console.log(describe(resumed));
      }
    }
    const outcome = await client.submit(`checkout:${cart}`, { cart, amount: 1299, card: 'tok_visa' });
    if (outcome.kind === 'unknown') {
      const reconciled = await client.reconcile(outcome.name);
      return reconciled ? explain(reconciled) : 'nothing to reconcile';
    }
    const kept: SettledOperation[] = client.settled();
    const forgotten: boolean = client.discard(`checkout:${cart}`);
    return `${describe(outcome)}; web locks: ${locks}; settled ${kept.length}; discarded ${forgotten}`;
  } catch (e) {
    const error = e as IdempotencyError;
    return `${error.code}: ${error.message}`;
  } finally {
    stop();
    client.free();
  }
}

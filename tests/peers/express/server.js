// A checkout as an express-idempotency user writes it, following that package's README:
// the middleware on the route, the handler returning early on a hit. POST /pay (and the
// same handler at POST /pay/again, a second keyed endpoint) records a
// charge (its `amount`) and answers 201 with it, after `X-Delay-Ms` if the request asks;
// GET /effects lists the charges, the effect idem-check counts. Listens on 127.0.0.1:$PORT
// (0: a free port) and prints "listening on http://…" once it does.
'use strict';

const express = require('express');
const { idempotency, getSharedIdempotencyService } = require('express-idempotency');

const app = express();
app.use(express.json());

const charges = [];

async function pay(req, res) {
  if (getSharedIdempotencyService().isHit(req)) {
    return;
  }
  const delay = Number(req.get('x-delay-ms') || 0);
  if (delay > 0) {
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  const row = { charge: `ch_${charges.length + 1}`, amount: req.body ? req.body.amount : null };
  charges.push(row);
  res.status(201).json(row);
}

app.post('/pay', idempotency(), pay);
// Another keyed endpoint, as a shop has (refunds, captures), with the same handler.
app.post('/pay/again', idempotency(), pay);

app.get('/effects', (_req, res) => res.json(charges));

const server = app.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

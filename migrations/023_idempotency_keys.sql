-- Each Idempotency-Key a tenant used, with the request it was used for (a hash of the route, its
-- path parameters and its body): a retry of that request gets the first answer, the same key on
-- another route or with another body is a 409 (src/api/idempotency.ts).
CREATE TABLE idempotency_keys (
  tenant text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, key)
);

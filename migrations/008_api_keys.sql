-- API keys made with `deep-research keys create`: only the SHA-256 of a key is kept (keys are 32
-- random bytes, so a plain hash is enough); the id is the public part shown by `keys list`.
CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  tenant      text NOT NULL,
  name        text,
  key_hash    text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);

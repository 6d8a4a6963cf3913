-- Keys past their lifetime are free again and swept (src/activities/store/idempotency-keys.ts).
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

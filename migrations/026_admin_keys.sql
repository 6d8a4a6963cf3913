-- A stored key made with `keys create --admin`: it acts on the memory of every user of its tenant
-- (reads, corrects and deletes their facts, names them as a run's `userId`) and turns memory on or
-- off for any stored key of its tenant. Other stored keys act on their own user's memory only.
ALTER TABLE api_keys ADD COLUMN admin boolean NOT NULL DEFAULT false;

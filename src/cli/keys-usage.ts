// `deep-research keys --help`: a module of its own, so the help loads nothing of the database.
export const KEYS_USAGE = `Usage:
  deep-research keys create --tenant <tenant> [--name <label>] [--no-memory] [--admin]
                                                                  print a new key (shown once); --no-memory:
                                                                  its requests neither use nor teach user memory;
                                                                  --admin: it acts on every user's memory of the
                                                                  tenant and every key's memory setting
  deep-research keys list [--tenant <tenant>] [--json]           ids, tenants, created, revoked
  deep-research keys revoke <id>                                  the key stops working at once`;

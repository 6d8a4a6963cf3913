// Keys at #/keys: the tenant's stored API keys (ids, names, dates; never secrets) and revoking one.
import { useEffect, useState } from 'preact/hooks';
import { client, keyStore } from './api';
import { KeyForm } from './key-form';
import type { OwnKeys } from '../../src/api/routes/keys';

export function Keys() {
  const [keys, setKeys] = useState<OwnKeys | undefined>();
  const [message, setMessage] = useState('');
  const load = () => client.keys.list().then(setKeys, (err: Error) => setMessage(err.message));
  useEffect(() => void load(), []);
  const revoke = async (id: string, current: boolean) => {
    if (!confirm(current ? 'This is the key this page uses: revoke it and sign out?' : `Revoke key ${id}?`)) return;
    try {
      await client.keys.revoke(id);
      if (current) {
        keyStore.clear();
        location.hash = '#/';
        location.reload();
        return;
      }
      setMessage(`Key ${id} revoked: it stops working at once.`);
      void load();
    } catch (err) {
      setMessage((err as Error).message);
    }
  };
  const setMemory = async (id: string, memory: boolean) => {
    try {
      await client.keys.setMemory(id, memory);
      setMessage(memory ? `Key ${id} uses user memory again.` : `Key ${id} no longer uses or teaches user memory.`);
      void load();
    } catch (err) {
      setMessage((err as Error).message);
    }
  };
  return (
    <section class="card" aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {keys && (
        <p class="muted">
          Tenant <strong>{keys.tenant}</strong>.{' '}
          {keys.currentKey === 'configured'
            ? 'This page uses a key from the server’s API_KEYS, which only the operator can change.'
            : keys.currentKey === 'none'
              ? 'This server takes requests without a key.'
              : ''}{' '}
          New keys are made with <code>deep-research keys create</code>.
        </p>
      )}
      <h2>Use another key on this page</h2>
      <p class="muted">
        A run belongs to the tenant of the key that started it (no key: tenant default). To see the runs of a key, from an OpenAI client
        say, use it here; it is kept in this browser only, until “Forget key”.
      </p>
      <KeyForm
        label="Use this key on this page"
        onKey={() => {
          location.hash = '#/';
          location.reload();
        }}
      />
      {message && <p role="status">{message}</p>}
      {keys?.keys.length === 0 && <p>No stored keys for this tenant.</p>}
      {keys && keys.keys.length > 0 && (
        <table class="keys">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">User memory</th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.keys.map((k) => (
              <tr key={k.id}>
                <td>
                  <code>{k.id}</code>
                  {k.current && <span class="badge">this page</span>}
                </td>
                <td>{k.name ?? ''}</td>
                <td>{new Date(k.createdAt).toLocaleString()}</td>
                <td>
                  {k.revokedAt ? `revoked ${new Date(k.revokedAt).toLocaleString()}` : 'live'}
                  {k.admin && ', admin'}
                </td>
                <td>
                  {k.memory ? 'on' : 'off'}
                  {/* An admin key switches any key; another key only turns its own memory off (src/api/routes/keys.ts). */}
                  {!k.revokedAt && (keys.admin || (k.current && k.memory)) && (
                    <>
                      {' '}
                      <button type="button" class="link" onClick={() => void setMemory(k.id, !k.memory)}>
                        {k.memory ? 'Turn off' : 'Turn on'}
                        <span class="sr-only"> user memory for key {k.id}</span>
                      </button>
                    </>
                  )}
                </td>
                <td>
                  {!k.revokedAt && (
                    <button type="button" class="link" onClick={() => void revoke(k.id, k.current)}>
                      Revoke<span class="sr-only"> key {k.id}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

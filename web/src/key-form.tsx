// The key this browser sends: asked for when the API wants one (401), and offered on the keys
// screen, where a page on dev's open API can switch to the tenant of a key (to open a run that a
// key started, from an OpenAI client say).
import { useState } from 'preact/hooks';
import { keyStore } from './api';

/** The command that makes a key for the runs started without one. */
export const DEFAULT_KEY_COMMAND = 'npx deep-research keys create --tenant default';

export function KeyForm({ onKey, error, label = 'Use this key' }: { onKey: () => void; error?: string; label?: string }) {
  const [draft, setDraft] = useState('');
  return (
    <form
      class="key-form"
      onSubmit={(e) => {
        e.preventDefault();
        keyStore.set(draft.trim());
        onKey();
      }}
    >
      <label for="api-key">Key</label>
      <input id="api-key" type="password" autocomplete="off" required value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit">{label}</button>
    </form>
  );
}

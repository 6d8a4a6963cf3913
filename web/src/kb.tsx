// Knowledge base: collections (list, create, delete) at #/kb, and one collection at #/kb/<id>:
// upload by drag and drop or the file picker, each file's progress (upload, then ingestion until
// ready or failed with the reason), its documents, and a document's passages.
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, plural } from './api';
import { uploadDocument } from './calls';
import type { DocumentDetail } from '../../src/api/contract';
import type { CollectionSearchResult, CollectionView, DocumentView } from '../../src/shared/knowledge';
const settled = (d: DocumentView) => d.status === 'ready' || d.status === 'failed';

export function Collections() {
  const [list, setList] = useState<CollectionView[] | undefined>();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [language, setLanguage] = useState('en');
  const [error, setError] = useState('');
  const load = () =>
    client.collections.list().then(
      (r) => setList(r.collections),
      (err: Error) => setError(err.message),
    );
  useEffect(() => void load(), []);
  return (
    <>
      <form
        class="card"
        aria-labelledby="new-collection"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const c = await client.collections.create({ name, description, language });
            location.hash = `#/kb/${encodeURIComponent(c.id)}`;
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <h1 id="new-collection">New collection</h1>
        <div class="grid">
          <label>
            Name
            <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Language (en, de, zh, ja, ko, simple…)
            <input required value={language} onInput={(e) => setLanguage(e.currentTarget.value)} />
          </label>
        </div>
        <label for="collection-description">Description (what is in it: runs choose collections by it)</label>
        <textarea
          id="collection-description"
          rows={2}
          maxLength={2000}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <button type="submit">Create collection</button>
      </form>
      <section class="card" aria-labelledby="collections-title">
        <h2 id="collections-title">Your collections</h2>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {list?.length === 0 && <p>No collections yet.</p>}
        <ul class="runs">
          {list?.map((c) => (
            <li key={c.id}>
              <a href={`#/kb/${encodeURIComponent(c.id)}`}>{c.name}</a>
              <span class="muted">
                {plural(c.documents, 'document')} · {plural(c.chunks, 'passage')} · {c.language}
              </span>
              <button
                type="button"
                class="link"
                onClick={async () => {
                  if (!confirm(`Delete the collection “${c.name}” and its documents?`)) return;
                  await client.collections.delete(c.id).catch((err: Error) => setError(err.message));
                  void load();
                }}
              >
                Delete<span class="sr-only"> {c.name}</span>
              </button>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/** A file sent from this page: its upload share, then the document the API made of it. */
interface Sending {
  n: number;
  name: string;
  share: number;
  doc?: DocumentView;
  error?: string;
}

let sent = 0;

export function CollectionPage({ id }: { id: string }) {
  const [c, setC] = useState<CollectionView | undefined>();
  const [docs, setDocs] = useState<DocumentView[]>([]);
  const [sending, setSending] = useState<Sending[]>([]);
  const [over, setOver] = useState(false);
  const [open, setOpen] = useState<string | undefined>();
  const [error, setError] = useState('');
  const picker = useRef<HTMLInputElement>(null);

  const load = async () => {
    try {
      const [col, list] = await Promise.all([client.collections.get(id), client.collections.documents(id)]);
      setC(col);
      setDocs(list.documents);
      setSending((all) => all.map((s) => (s.doc ? { ...s, doc: list.documents.find((d) => d.id === s.doc!.id) ?? s.doc } : s)));
      return list.documents;
    } catch (err) {
      setError((err as Error).message);
      return [];
    }
  };
  // Ingestion runs in a workflow: the list is read again every 1.5 s while a document is not settled.
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      const list = await load();
      if (!stop) setTimeout(() => void tick(), list.every(settled) ? 10_000 : 1_500);
    };
    void tick();
    return () => void (stop = true);
  }, [id]);

  const send = (files: FileList | File[]) => {
    for (const file of [...files]) {
      const at: Sending = { n: ++sent, name: file.name, share: 0 };
      setSending((all) => [...all, at]);
      const update = (patch: Partial<Sending>) => setSending((all) => all.map((s) => (s.n === at.n ? { ...s, ...patch } : s)));
      uploadDocument(id, file, (share) => update({ share })).then(
        (doc) => {
          update({ share: 1, doc });
          void load();
        },
        (err: Error) => update({ error: err.message }),
      );
    }
  };

  return (
    <>
      <section class="card" aria-labelledby="collection-title">
        <p>
          <a href="#/kb">← All collections</a>
        </p>
        <h1 id="collection-title">{c?.name ?? id}</h1>
        {c && (
          <p class="muted">
            {c.description || 'No description.'} · {c.language} · {plural(c.documents, 'document')}, {plural(c.chunks, 'passage')}
          </p>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div
          class={`drop${over ? ' over' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => {
            e.preventDefault();
            setOver(false);
            if (e.dataTransfer?.files.length) send(e.dataTransfer.files);
          }}
        >
          <p>Drop PDF, Word, HTML, Markdown or text files here, or</p>
          <label for="kb-files" class="button">
            Choose files
          </label>
          <input
            id="kb-files"
            ref={picker}
            class="sr-only"
            type="file"
            multiple
            onChange={(e) => {
              if (e.currentTarget.files?.length) send(e.currentTarget.files);
              e.currentTarget.value = '';
            }}
          />
        </div>
        {sending.length > 0 && (
          <ul class="uploads" aria-label="Uploads" aria-live="polite">
            {sending.map((s) => (
              <li key={s.n}>
                <strong>{s.name}</strong> <Progress s={s} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <Search collectionId={id} />
      <section class="card" aria-labelledby="documents-title">
        <h2 id="documents-title">Documents</h2>
        {docs.length === 0 && <p>No documents yet.</p>}
        <ul class="runs">
          {docs.map((d) => (
            <li key={d.id}>
              <button type="button" class="link" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
                {d.title || d.name}
              </button>
              <span class={`badge ${d.status === 'ready' ? 'completed' : d.status}`}>{d.status}</span>
              <span class="muted">
                {d.format ?? ''} · {d.chunks} passages{d.pages ? ` · ${d.pages} pages` : ''}
              </span>
              {d.error && <span class="error">{d.error}</span>}
              <button
                type="button"
                class="link"
                onClick={async () => {
                  await client.collections.deleteDocument(id, d.id).catch((err: Error) => setError(err.message));
                  void load();
                }}
              >
                Delete<span class="sr-only"> {d.name}</span>
              </button>
              {open === d.id && <Passages collectionId={id} doc={d} />}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

function Progress({ s }: { s: Sending }) {
  if (s.error)
    return (
      <span class="error" role="alert">
        failed: {s.error}
      </span>
    );
  if (!s.doc)
    return (
      <>
        <progress max={1} value={s.share} aria-label={`Uploading ${s.name}`} /> uploading {Math.round(s.share * 100)}%
      </>
    );
  const d = s.doc;
  if (d.status === 'failed') return <span class="error">ingestion failed: {d.error ?? 'no reason given'}</span>;
  if (d.status === 'ready') return <span class="badge completed">ready</span>;
  const share = d.status === 'embedding' && d.chunks ? d.embedded / d.chunks : undefined;
  return (
    <>
      <progress max={1} {...(share === undefined ? {} : { value: share })} aria-label={`Ingesting ${s.name}`} /> {d.status}
      {d.duplicate ? ' (already in the collection)' : ''}
    </>
  );
}

function Passages({ collectionId, doc }: { collectionId: string; doc: DocumentView }) {
  const [detail, setDetail] = useState<DocumentDetail | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    client.collections.document(collectionId, doc.id, { chunks: true }).then(setDetail, (err: Error) => setError(err.message));
  }, [doc.id, doc.status]);
  if (error) return <p class="error">{error}</p>;
  if (!detail) return <p role="status">Loading passages…</p>;
  return (
    <ol class="passages" tabIndex={0} aria-label={`Passages of ${doc.title || doc.name}`}>
      {(detail.chunkList ?? []).map((c) => (
        <li key={c.seq} id={`chunk-${c.seq}`}>
          <span class="muted">
            {c.page ? `p. ${c.page}` : ''}
            {c.headingPath.length ? ` ${c.headingPath.join(' › ')}` : ''}
          </span>
          <p>{c.text}</p>
        </li>
      ))}
    </ol>
  );
}

/** The collection's passages for a query, as a run would find them. */
function Search({ collectionId }: { collectionId: string }) {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<CollectionSearchResult | undefined>();
  const [error, setError] = useState('');
  return (
    <section class="card" aria-labelledby="kb-search-title">
      <h2 id="kb-search-title">Search this collection</h2>
      <form
        class="filters search"
        role="search"
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            setFound(await client.collections.search(collectionId, { query }));
            setError('');
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <label>
          Words or a question
          <input type="search" required maxLength={500} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <button type="submit">Search passages</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {found && (
        <div role="status">
          <p class="muted">
            {plural(found.passages.length, 'passage')} for “{found.query}”
            {found.vectors === 'off' || found.vectors === 'unavailable' ? ' (full text only)' : ''}
          </p>
          <ol class="passages" tabIndex={0} aria-label="Passages found">
            {found.passages.map((p) => (
              <li key={`${p.documentId}-${p.seq}`}>
                <strong>{p.documentTitle}</strong>{' '}
                <span class="muted">
                  {p.page ? `p. ${p.page}` : ''}
                  {p.headingPath.length ? ` ${p.headingPath.join(' › ')}` : ''}
                </span>
                <p>{p.text}</p>
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}

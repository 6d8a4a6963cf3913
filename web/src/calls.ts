// Calls the shared helpers (api.ts) do not make: an upload with its progress (XMLHttpRequest: fetch
// reports no upload progress), and a short wait.
import { ApiError, client, keyStore } from './api';
import type { DocumentView } from '../../src/shared/knowledge';

/** Sends `file` to the collection as multipart (field `file`); `onProgress` gets 0..1 as it goes. */
export function uploadDocument(collectionId: string, file: File, onProgress: (share: number) => void): Promise<DocumentView> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', client.paths.documents(collectionId));
    const key = keyStore.get();
    if (key) xhr.setRequestHeader('authorization', `Bearer ${key}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, 'network', 'the upload did not reach the server'));
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = {};
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body as DocumentView);
      const e = (body as { error?: { code?: string; message?: string } }).error;
      reject(new ApiError(xhr.status, e?.code ?? String(xhr.status), e?.message ?? xhr.statusText));
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

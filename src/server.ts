// Composition root for the HTTP API.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { createApp } from './api/app';
import { createResearchService } from './api/research-service';
import { createStore } from './activities/store';
import type { Logger } from './infra/logger';
import type { Config } from './config';
import type { RetrySettings } from './shared/schemas';

export interface ApiServerDeps {
  client: Client;
  pool: pg.Pool;
  taskQueue: string;
  namespace: string;
  host: string;
  port: number;
  log: Logger;
  preflight?: () => string | undefined;
  retry?: RetrySettings;
  llm?: Pick<Config['llm'], 'models' | 'prices'>;
}

export interface ApiServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export async function startApiServer(deps: ApiServerDeps): Promise<ApiServer> {
  const store = createStore(deps.pool);
  const app = createApp({
    research: createResearchService({
      client: deps.client,
      taskQueue: deps.taskQueue,
      store,
      ...(deps.retry ? { retry: deps.retry } : {}),
      ...(deps.llm ? { llm: deps.llm } : {}),
    }),
    readiness: {
      temporal: async () => {
        await deps.client.workflowService.describeNamespace({ namespace: deps.namespace });
      },
      postgres: () => store.ping(),
    },
    log: deps.log,
    ...(deps.preflight ? { preflight: deps.preflight } : {}),
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = deps.host === '0.0.0.0' || deps.host === '::' ? 'localhost' : deps.host;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

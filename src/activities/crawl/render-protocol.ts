// What the worker and its render hosts (render-host.ts, one process per page rendered at a time)
// say to each other over the child-process channel.
import type { RenderedPage, RenderLimits } from './browser';

export type HostLimits = RenderLimits;

export type ToHost = { type: 'init'; limits: HostLimits } | { type: 'render'; id: number; url: string; banned: string[] };

/** An error as it crossed the channel: its class (for the crawl's outcome), message, HTTP status, code. */
export interface WireError {
  name: string;
  message: string;
  status?: number;
  code?: string;
}

export type FromHost = { type: 'rendered'; id: number; page: RenderedPage } | { type: 'failed'; id: number; error: WireError };

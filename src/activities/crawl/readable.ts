// A fetched body made readable (extract.ts, in the calling thread or off it: extract-thread.ts).
export interface Readable {
  title: string;
  markdown: string;
  /** The publication date (`YYYY-MM-DD`) the page states in its markup, when it does. */
  published?: string;
}

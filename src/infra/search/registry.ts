// Every search provider, one line each, in the order the router prefers them within a topic.
import type { RegisteredProvider } from './provider';
import { searxng } from './searxng';
import { tavily } from './tavily';
import { brave } from './brave';
import { exa } from './exa';
import { serper } from './serper';
import { duckduckgo } from './duckduckgo';
import { wikipedia } from './wikipedia';
import { openalex } from './openalex';
import { arxiv } from './arxiv';
import { pubmed } from './pubmed';
import { semanticScholar } from './semantic-scholar';

export const SEARCH_PROVIDERS: readonly RegisteredProvider[] = [
  searxng,
  tavily,
  brave,
  exa,
  serper,
  duckduckgo,
  wikipedia,
  openalex,
  arxiv,
  pubmed,
  semanticScholar,
];

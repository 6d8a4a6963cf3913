// A deterministic stand-in for an embedding model, used by the scripted LLM server's /embeddings route.
//
// What it can show: texts that say the same thing in different words land close together, because
// synonyms in CONCEPTS share one hashed feature ("photovoltaic output" ~ "solar generation"). That
// is exactly the match PostgreSQL full-text cannot make, so hybrid retrieval has something real to
// fuse. It is deterministic (same text, same vector, on every machine) and needs no model or network.
//
// What it cannot show: real semantic quality. It knows only the synonym groups below (written for
// the energy corpus in test/fixtures/kb/corpus.json), reads English, and Chinese only through
// CJK_CONCEPTS (written for test/fixtures/kb/corpus-zh.json) and character bigrams, ignores word order and
// negation ("not cheap" ~ "cheap"), and treats polysemy naively ("carbon fibre" counts as emissions).
// Like real embedding models it is weak on exact identifiers: numbers and codes ("855", "45Y") weigh
// little, so full-text search keeps an edge on such queries. Hashing ~100 features of a chunk into
// 256 dimensions collides, which adds noise of its own (cosines of unrelated texts are not 0).
// Recall numbers measured with it say whether the plumbing works, not how good a real model would be.
//
// LlamaServerDouble (at the end) is llama.cpp's llama-server as a client of /embeddings sees it:
// started without --embeddings it refuses them with its own 501; with them it serves these vectors.
import type http from 'node:http';
import { listen, readBody, type RunningServer } from './http';

export const EMBEDDING_DIMENSIONS = 256;

/** Synonym groups: every word of a group maps to the group's id, so all of them share a dimension. */
export const CONCEPTS: Readonly<Record<string, readonly string[]>> = {
  solar: ['solar', 'photovoltaic', 'pv', 'panel', 'module', 'sunlight', 'sunshine', 'irradiance', 'sun'],
  wind: ['wind', 'turbine', 'rotor', 'blade', 'nacelle', 'windfarm'],
  sea: ['offshore', 'sea', 'seabed', 'marine', 'ocean', 'coastal', 'coast', 'subsea', 'nearshore'],
  battery: ['battery', 'storage', 'store', 'accumulator', 'bess', 'lithium', 'lfp', 'cell'],
  cost: [
    'cost',
    'price',
    'expense',
    'expensive',
    'cheap',
    'cheaper',
    'cheapest',
    'costly',
    'affordable',
    'tariff',
    'spending',
    'capex',
    'pay',
    'money',
    'bill',
    'dearer',
    'outlay',
  ],
  capacity: ['capacity', 'megawatt', 'mw', 'gigawatt', 'gw', 'output', 'rating', 'nameplate', 'size', 'kilowatt', 'kw'],
  energyAmount: ['mwh', 'gwh', 'twh', 'kwh', 'megawatt-hour', 'gigawatt-hour', 'terawatt-hour', 'kilowatt-hour'],
  efficiency: ['efficiency', 'efficient', 'round-trip', 'roundtrip', 'loss', 'lose', 'lost', 'wasted', 'waste', 'inefficient'],
  hydro: ['hydro', 'hydroelectric', 'hydropower', 'pumped', 'reservoir', 'dam', 'penstock', 'headpond', 'tailrace'],
  emission: ['emission', 'emit', 'carbon', 'co2', 'greenhouse', 'pollution', 'polluting', 'decarbonisation', 'decarbonise', 'fossil'],
  regulation: [
    'regulation',
    'regulator',
    'regulatory',
    'policy',
    'law',
    'legislation',
    'subsidy',
    'incentive',
    'mandate',
    'rule',
    'statute',
    'government',
    'directive',
  ],
  grid: ['grid', 'transmission', 'network', 'interconnector', 'interconnection', 'line', 'cable', 'pylon', 'conductor', 'wire', 'mains'],
  outage: ['outage', 'blackout', 'failure', 'fault', 'trip', 'disruption', 'interruption', 'collapse', 'breakdown', 'fail', 'shutdown'],
  maintenance: ['maintenance', 'repair', 'inspection', 'servicing', 'upkeep', 'technician', 'overhaul', 'fix'],
  degradation: ['degradation', 'degrade', 'ageing', 'aging', 'wear', 'deterioration', 'fade', 'erosion', 'decline'],
  lifetime: ['lifetime', 'lifespan', 'life', 'durability', 'longevity', 'warranty'],
  demand: ['demand', 'load', 'consumption', 'consume', 'usage', 'peak'],
  stability: ['frequency', 'inertia', 'stability', 'balancing', 'ancillary', 'hertz', 'hz', 'stabilise', 'steady'],
  heat: ['heat', 'heating', 'thermal', 'temperature', 'warm', 'warmth', 'hot', 'cold', 'winter', 'boiler', 'furnace'],
  hydrogen: ['hydrogen', 'electrolyser', 'electrolyzer', 'electrolysis', 'h2', 'ammonia'],
  safety: ['fire', 'safety', 'hazard', 'explosion', 'blaze', 'flame', 'danger', 'dangerous', 'runaway'],
  land: ['land', 'hectare', 'acre', 'acreage', 'site', 'plot', 'field', 'farmland', 'footprint'],
  wildlife: [
    'wildlife',
    'bird',
    'seabird',
    'habitat',
    'ecology',
    'ecological',
    'species',
    'biodiversity',
    'animal',
    'fish',
    'mammal',
    'porpoise',
    'dolphin',
    'whale',
  ],
  community: ['community', 'resident', 'local', 'neighbour', 'village', 'town', 'public', 'people'],
  forecast: ['forecast', 'prediction', 'predict', 'projection', 'expect', 'outlook', 'anticipate'],
  permit: ['permit', 'consent', 'approval', 'licence', 'license', 'authorisation', 'authorization', 'planning'],
  construction: ['construction', 'build', 'built', 'install', 'installation', 'commissioning', 'erect', 'construct', 'builder'],
  household: ['household', 'home', 'house', 'customer', 'consumer', 'residential', 'homeowner', 'family', 'dwelling'],
  employment: ['job', 'employment', 'worker', 'workforce', 'labour', 'labor', 'staff', 'employ', 'hire'],
  delay: ['delay', 'queue', 'backlog', 'wait', 'waiting', 'slow', 'bottleneck', 'late'],
  increase: ['increase', 'growth', 'rise', 'expand', 'grow', 'surge', 'climb', 'higher', 'boost'],
  decrease: ['decrease', 'fall', 'drop', 'reduce', 'reduction', 'cut', 'lower', 'shrink', 'plunge'],
  electricity: ['electricity', 'power', 'electric', 'electrical', 'generation', 'generate', 'generator'],
  annual: ['annual', 'annually', 'yearly', 'year', 'annum'],
  vehicle: ['vehicle', 'car', 'ev', 'charger', 'charging', 'fleet', 'truck'],
};

const STOPWORDS = new Set(
  (
    'a an the and or but if of to in on at by for with from into onto over under about as is are was were be been being ' +
    'it its this that these those there here than then so such can could may might will would should must do does did done ' +
    'has have had having not no nor very also just only which who whom whose what when where why how all any each both ' +
    'other some most own same we our you your they their them he she his her i me my us up down out off again further ' +
    'once per via while during before after above below between through'
  ).split(' '),
);

/** Crude English suffix stripping: enough to merge turbine/turbines, pump/pumped/pumping. */
export function stem(word: string): string {
  let w = word.replace(/'s$/, '');
  if (w.length <= 3 || /^\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length >= 6) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length >= 5) w = w.slice(0, -2);
  if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  return w;
}

const conceptOf = new Map<string, string>();
for (const [id, words] of Object.entries(CONCEPTS)) for (const w of words) conceptOf.set(stem(w), id);

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// A concept outweighs a single word because it stands for all of its surface forms; the exact word
// adds a little on top, so an exact match still beats a synonym. Unknown words keep their word
// feature plus trigrams, which let "recycling" and "recyclers" meet halfway. Numbers and
// codes ("855", "45y") count for less, as they do in real embedding models, which blur them.
const CONCEPT_WEIGHT = 1.5;
const SAME_WORD_WEIGHT = 0.3;
const UNKNOWN_WORD_WEIGHT = 1;
const CODE_WEIGHT = 0.25;
const TRIGRAM_BLOCK_WEIGHT = 0.5;

/** The stemmed content words of `text`, stop words dropped, in order (with repeats). */
export function terms(text: string): string[] {
  const out: string[] = [];
  const tokens =
    text
      .toLowerCase()
      .replace(/['’]s\b/g, '')
      .match(/[a-z0-9]+(?:['-][a-z0-9]+)*/g) ?? [];
  for (const token of tokens) {
    // A hyphenated word the table knows ("round-trip") stays whole; otherwise its parts count.
    const parts = conceptOf.has(stem(token)) || !token.includes('-') ? [token] : token.split('-');
    for (const part of parts) if (part && !STOPWORDS.has(part)) out.push(stem(part));
  }
  return out;
}

/**
 * Chinese synonym groups, under the English group's id where English has the concept (a real
 * multilingual model puts 电池 near "battery" too). Words are found by forward maximum matching,
 * so a longer word wins over a shorter one it contains (蓄电池 over 电池).
 */
export const CJK_CONCEPTS: Readonly<Record<string, readonly string[]>> = {
  battery: ['电池', '蓄电池', '动力电池', '锂电池', '电芯', '储能'],
  hydro: ['水电', '水电站', '水库', '大坝', '水轮', '水利'],
  solar: ['光伏', '太阳能', '阳光', '光照', '光伏板'],
  electricity: ['发电', '电力', '供电', '发电量', '电能'],
  cost: ['多少钱', '价格', '成本', '费用', '便宜', '昂贵', '花钱'],
  safety: ['起火', '火灾', '防火', '热失控', '燃烧', '着火'],
  train: ['高铁', '动车', '动车组', '列车', '火车', '子弹车', '高速铁路', '复兴号'],
  speed: ['时速', '速度', '多快', '最快', '车速', '跑多快', '开多快'],
  panda: ['大熊猫', '熊猫', '国宝'],
  breeding: ['繁殖', '繁育', '生育', '生宝宝', '幼崽', '授精', '哺乳', '产仔'],
  captive: ['圈养', '人工环境', '饲养'],
  garbage: ['垃圾', '废品', '废物', '湿垃圾', '干垃圾', '可回收物'],
  dispose: ['投放', '扔', '乱扔', '丢弃', '倒入'],
  penalty: ['罚款', '罚', '处罚', '处以'],
  acupuncture: ['针灸', '针刺', '扎针', '毫针', '穴位'],
  headache: ['头疼', '头痛', '偏头痛'],
  evidence: ['证据', '依据', '试验', '科学', '对照', '疗效'],
  payment: ['支付', '付款', '付钱', '收款', '转账', '移动支付'],
  qrcode: ['二维码', '扫码', '收款码', '扫描'],
  fraud: ['诈骗', '骗', '骗钱', '冒充', '伪造', '欺诈'],
  newYear: ['春节', '过年', '春运', '节前', '节后'],
  homeTrip: ['返乡', '回家', '回老家', '老家'],
  ticket: ['车票', '火车票', '购票', '买票', '抢票', '售票', '退票'],
  old: ['旧', '退役', '废旧', '报废', '老化'],
  recycle: ['回收', '再生', '拆解', '梯次利用', '再利用'],
  computer: ['电脑', '计算机', '机器', '程序', '人工智能'],
  go: ['围棋', '下棋', '棋手', '对弈', '棋谱'],
  win: ['赢', '击败', '战胜', '胜率'],
  champion: ['世界冠军', '冠军', '顶尖', '最高水平'],
  tea: ['茶叶', '绿茶', '龙井', '明前茶', '炒茶'],
  desert: ['沙漠', '流沙', '沙地', '沙尘暴', '治沙'],
  tunnel: ['隧道', '盾构', '盾构机', '掘进'],
  mural: ['壁画', '彩塑', '洞窟', '飞天'],
  rice: ['水稻', '杂交稻', '海水稻', '稻'],
};

/** Characters too common to say anything in a bigram (particles, copulas, pronouns). */
const CJK_STOP = new Set(Array.from('的了是在和与及等也都而把被对从为就这那个有一不之其或以于'));
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
/** A CJK bigram weighs about what an English word's trigrams do together: a hint, below a concept. */
const CJK_BIGRAM_WEIGHT = 0.2;
const cjkConceptOf = new Map<string, string>();
for (const [id, words] of Object.entries(CJK_CONCEPTS)) for (const w of words) cjkConceptOf.set(w, id);
const CJK_LONGEST = Math.max(...[...cjkConceptOf.keys()].map((w) => Array.from(w).length));

/** The CJK runs' known words (longest first at each position) and bigrams. Text without CJK adds nothing. */
function addCjkFeatures(text: string, add: (key: string, weight: number) => void): void {
  for (const run of text.match(CJK_RUN) ?? []) {
    const chars = Array.from(run);
    for (let i = 0; i < chars.length;) {
      let len = Math.min(CJK_LONGEST, chars.length - i);
      while (len > 0 && !cjkConceptOf.has(chars.slice(i, i + len).join(''))) len--;
      if (len === 0) {
        i++;
        continue;
      }
      const word = chars.slice(i, i + len).join('');
      add(`c:${cjkConceptOf.get(word)!}`, CONCEPT_WEIGHT);
      add(`w:${word}`, SAME_WORD_WEIGHT);
      i += len;
    }
    for (let i = 0; i + 1 < chars.length; i++) {
      if (!CJK_STOP.has(chars[i]!) && !CJK_STOP.has(chars[i + 1]!)) add(`b:${chars[i]!}${chars[i + 1]!}`, CJK_BIGRAM_WEIGHT);
    }
  }
}

function features(text: string): Map<string, { weight: number; count: number }> {
  const out = new Map<string, { weight: number; count: number }>();
  const add = (key: string, weight: number) => {
    const f = out.get(key);
    if (f) {
      f.count++;
      f.weight = Math.max(f.weight, weight);
    } else out.set(key, { weight, count: 1 });
  };
  for (const w of terms(text)) {
    const concept = conceptOf.get(w);
    if (concept) {
      add(`c:${concept}`, CONCEPT_WEIGHT);
      add(`w:${w}`, SAME_WORD_WEIGHT);
    } else if (/\d/.test(w)) {
      add(`w:${w}`, CODE_WEIGHT);
    } else {
      add(`w:${w}`, UNKNOWN_WORD_WEIGHT);
      const padded = `#${w}#`;
      const grams = Math.max(1, padded.length - 2);
      for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, TRIGRAM_BLOCK_WEIGHT / Math.sqrt(grams));
    }
  }
  addCjkFeatures(text, add);
  return out;
}

/** A unit vector for `text`: same text, same vector; shared words and synonyms raise the cosine. */
export function embedText(text: string, dims = EMBEDDING_DIMENSIONS): number[] {
  const v = new Array<number>(dims).fill(0);
  let feats = features(text);
  // A text of stop words only still gets a unit vector: a zero vector has no cosine at all.
  if (feats.size === 0) feats = new Map([[`empty:${text.trim().toLowerCase()}`, { weight: 1, count: 1 }]]);
  for (const [key, { weight, count }] of feats) {
    const h = fnv1a(key);
    const sign = fnv1a(`${key}#sign`) & 1 ? 1 : -1;
    // Sublinear term frequency: a word repeated ten times is not ten times the topic.
    v[h % dims]! += sign * weight * (1 + Math.log(count));
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  // Features can cancel out in one dimension (opposite signs, equal weights): still a unit vector.
  if (norm === 0) return v.map((_, i) => (i === fnv1a(text) % dims ? 1 : 0));
  return v.map((x) => x / norm);
}

/** Cosine of two vectors (for unit vectors, their dot product). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/** llama-server's error body (server.cpp: format_error_response; nlohmann::json orders its keys). */
export function llamaError(code: number, message: string, type: string): { error: { code: number; message: string; type: string } } {
  return { error: { code, message, type } };
}

/** Exactly what llama-server answers to an embeddings request when it was started without --embeddings. */
export const LLAMA_NO_EMBEDDINGS = llamaError(
  501,
  'This server does not support embeddings. Start it with `--embeddings`',
  'not_supported_error',
);
/** What llama-server answers while its model is still loading: a real outage, retried. */
export const LLAMA_LOADING = llamaError(503, 'Loading model', 'unavailable_error');

/**
 * llama.cpp's llama-server, as far as the models list and embeddings go. By default it is one
 * started without --embeddings: POST /embeddings and /v1/embeddings answer 501 with
 * LLAMA_NO_EMBEDDINGS (status, body and content type as llama-server sends them); set
 * `embeddings = true` for one restarted with the flag, which answers with embedText's vectors.
 * `answerNext` queues other answers for the next embeddings requests (LLAMA_LOADING's 503).
 */
export class LlamaServerDouble {
  /** As if started with --embeddings. */
  embeddings = false;
  /** Every request, in order, with the status it got. */
  readonly requests: { method: string; path: string; status: number }[] = [];
  private queued: { status: number; body: unknown }[] = [];
  private server: RunningServer | undefined;

  constructor(readonly modelAlias = 'qwen2.5-0.5b-instruct-q4_k_m.gguf') {}

  /** The base URL a client is configured with (OPENAI_BASE_URL, EMBEDDING_BASE_URL). */
  get url(): string {
    if (!this.server) throw new Error('LlamaServerDouble not started');
    return `${this.server.url}/v1`;
  }

  async start(): Promise<this> {
    this.server = await listen((req, res) => void this.handle(req, res));
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }

  answerNext(times: number, body: { error: { code: number } }): this {
    for (let i = 0; i < times; i++) this.queued.push({ status: body.error.code, body });
    return this;
  }

  /** Embeddings requests so far. */
  embeddingRequests(): number {
    return this.requests.filter((r) => r.path.endsWith('/embeddings')).length;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const body = await readBody(req);
    const send = (status: number, payload: unknown) => {
      this.requests.push({ method: req.method ?? '', path, status });
      const text = JSON.stringify(payload);
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && (path === '/models' || path === '/v1/models')) {
      return send(200, {
        object: 'list',
        data: [{ id: this.modelAlias, object: 'model', created: 1_700_000_000, owned_by: 'llamacpp', meta: null }],
      });
    }
    if (req.method === 'POST' && (path === '/embeddings' || path === '/v1/embeddings')) {
      const queued = this.queued.shift();
      if (queued) return send(queued.status, queued.body);
      if (!this.embeddings) return send(501, LLAMA_NO_EMBEDDINGS);
      let input: unknown;
      try {
        input = (JSON.parse(body) as { input?: unknown }).input;
      } catch {
        return send(500, llamaError(500, 'parse error', 'server_error'));
      }
      const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input.map(String) : [];
      if (!texts.length) return send(400, llamaError(400, '"input" must be provided', 'invalid_request_error'));
      const tokens = texts.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
      return send(200, {
        model: this.modelAlias,
        object: 'list',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
        data: texts.map((t, index) => ({ embedding: embedText(t), index, object: 'embedding' })),
      });
    }
    send(404, llamaError(404, 'File Not Found', 'not_found_error'));
  }
}

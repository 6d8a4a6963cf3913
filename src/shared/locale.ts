// Which language a run writes in, decided by code where a model's word cannot be trusted: a tag
// is usable only when it is a real BCP 47 tag whose language subtag names a real language, and a
// tag that contradicts the evident language of the question (its script, and for Latin text a
// handful of stop words) is replaced. Pure and deterministic (Intl only, no I/O), so workflows,
// the API and activities can all use it.

/** Script families that tell languages apart well enough to catch a wrong report language. */
export type Script = 'latin' | 'han' | 'kana' | 'hangul' | 'cyrillic' | 'arabic' | 'hebrew' | 'greek' | 'devanagari' | 'thai';

const SCRIPT_RANGES: [Script, RegExp][] = [
  ['kana', /[\u3040-\u30ff\u31f0-\u31ff]/gu],
  ['hangul', /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/gu],
  ['han', /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/gu],
  ['cyrillic', /[\u0400-\u04ff]/gu],
  ['arabic', /[\u0600-\u06ff\u0750-\u077f]/gu],
  ['hebrew', /[\u0590-\u05ff]/gu],
  ['greek', /[\u0370-\u03ff]/gu],
  ['devanagari', /[\u0900-\u097f]/gu],
  ['thai', /[\u0e00-\u0e7f]/gu],
  ['latin', /[A-Za-z\u00c0-\u024f]/gu],
];

/** The script each language with a non-Latin script is written in; every other language: Latin. */
const LANGUAGE_SCRIPT: Record<string, Script> = {
  zh: 'han',
  ja: 'kana',
  ko: 'hangul',
  ru: 'cyrillic',
  uk: 'cyrillic',
  be: 'cyrillic',
  bg: 'cyrillic',
  sr: 'cyrillic',
  mk: 'cyrillic',
  kk: 'cyrillic',
  mn: 'cyrillic',
  ar: 'arabic',
  fa: 'arabic',
  ur: 'arabic',
  ps: 'arabic',
  he: 'hebrew',
  yi: 'hebrew',
  el: 'greek',
  hi: 'devanagari',
  mr: 'devanagari',
  ne: 'devanagari',
  th: 'thai',
};

/** Languages written in scripts this detector does not tell apart: never overridden by script. */
const OTHER_SCRIPT_LANGUAGES = new Set(['am', 'hy', 'ka', 'bn', 'ta', 'te', 'kn', 'ml', 'gu', 'pa', 'si', 'my', 'km', 'lo', 'bo']);

/** The tag code falls back to for each script when the question says nothing more. */
const SCRIPT_LOCALE: Record<Exclude<Script, 'latin'>, string> = {
  han: 'zh-CN',
  kana: 'ja-JP',
  hangul: 'ko-KR',
  cyrillic: 'ru-RU',
  arabic: 'ar',
  hebrew: 'he-IL',
  greek: 'el-GR',
  devanagari: 'hi-IN',
  thai: 'th-TH',
};

/** Frequent short words of Latin-script languages: enough to tell a question's language. */
const STOP_WORDS: Record<string, { locale: string; words: Set<string> }> = {
  en: {
    locale: 'en-US',
    words: new Set(
      'the of and to in is are was were what how why which who does do did has have for with on from that this than since by be it its can will'.split(
        ' ',
      ),
    ),
  },
  de: {
    locale: 'de-DE',
    words: new Set(
      'der die das und ist sind wie was warum welche wer nicht mit von für auf dem den des ein eine seit hat haben wird'.split(' '),
    ),
  },
  fr: {
    locale: 'fr-FR',
    words: new Set('le la les et est sont comment pourquoi quel quelle qui des du une un pour avec dans depuis sur que ont'.split(' ')),
  },
  es: {
    locale: 'es-ES',
    words: new Set('el la los las y es son cómo como qué por qué cuál quién del una un para con en desde sobre que han'.split(' ')),
  },
  it: {
    locale: 'it-IT',
    words: new Set('il lo la gli le e è sono come perché quale chi del della una un per con dal dalla su che hanno'.split(' ')),
  },
  pt: {
    locale: 'pt-BR',
    words: new Set('o a os as e é são como por que qual quem do da uma um para com desde sobre que têm'.split(' ')),
  },
  nl: {
    locale: 'nl-NL',
    words: new Set('de het een en is zijn hoe wat waarom welke wie van voor met op sinds dat niet heeft hebben'.split(' ')),
  },
};

/** Built on first use: module load stays cheap in every workflow context that imports this file. */
let displayNames: Intl.DisplayNames | undefined;

/**
 * The canonical form of `tag` when it is a well-formed BCP 47 tag whose language is a real one
 * ("en-us" → "en-US"); undefined for "yes", "rnl", "researchtopic", "english" and the like.
 */
export function canonicalLocale(tag: string | null | undefined): string | undefined {
  if (typeof tag !== 'string') return undefined;
  const trimmed = tag.trim().replace(/_/g, '-');
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(trimmed) || trimmed.length > 35) return undefined;
  let canonical: string;
  try {
    [canonical = ''] = Intl.getCanonicalLocales(trimmed);
  } catch {
    return undefined;
  }
  const language = canonical.split('-')[0]!;
  if (language === 'und' || language === 'zxx' || language === 'mul' || language === 'mis') return undefined;
  // An unknown language comes back as its own code: "rnl" → "rnl", "en" → "English".
  let name: string | undefined;
  try {
    name = (displayNames ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' })).of(language);
  } catch {
    return undefined;
  }
  return name && name.toLowerCase() !== language.toLowerCase() ? canonical : undefined;
}

/** The language subtag of a tag ("zh-CN" → "zh"). */
export function languageOf(tag: string): string {
  return tag.split('-')[0]!.toLowerCase();
}

/** The script most of the text's letters are written in; undefined for text without letters. */
export function dominantScript(text: string): Script | undefined {
  let best: Script | undefined;
  let bestCount = 0;
  const counts = new Map<Script, number>();
  for (const [script, pattern] of SCRIPT_RANGES) counts.set(script, text.match(pattern)?.length ?? 0);
  // Japanese mixes kanji with kana: any real share of kana makes Han text Japanese.
  const kana = counts.get('kana')!;
  if (kana > 0 && kana * 5 >= counts.get('han')!) counts.set('kana', kana + counts.get('han')!);
  for (const [script, count] of counts) {
    if (count > bestCount) [best, bestCount] = [script, count];
  }
  return best;
}

/** The Latin-script language the text's stop words point to, when they point clearly to one. */
function latinLanguage(text: string): string | undefined {
  const words = text.toLowerCase().match(/[a-zà-ÿ]+/g) ?? [];
  let best: string | undefined;
  let bestHits = 0;
  let second = 0;
  for (const [language, { words: stop }] of Object.entries(STOP_WORDS)) {
    const hits = words.filter((w) => stop.has(w)).length;
    if (hits > bestHits) [best, bestHits, second] = [language, hits, bestHits];
    else if (hits > second) second = hits;
  }
  return best && bestHits >= 1 && bestHits > second ? best : undefined;
}

/** What the text's own letters say about its language: the script, and for Latin text the language when clear. */
export function evidentLanguage(text: string): { script: Script | undefined; language: string | undefined } {
  const script = dominantScript(text);
  if (script === undefined) return { script, language: undefined };
  if (script === 'latin') return { script, language: latinLanguage(text) };
  const language = languageOf(SCRIPT_LOCALE[script]);
  return { script, language };
}

/** A locale for the text by its letters: its script's usual tag, for Latin text the stop words' language, else en-US. */
export function detectLocale(text: string): string {
  const { script, language } = evidentLanguage(text);
  if (script === undefined) return 'en-US';
  if (script !== 'latin') return SCRIPT_LOCALE[script];
  return language ? STOP_WORDS[language]!.locale : 'en-US';
}

/**
 * Whether `tag` can be the language of an answer to `text`: its script is the text's, and for
 * Latin text whose stop words say which language it is, it is that language. A tag in a script
 * this detector does not know, or text without letters, is not contradicted.
 */
export function localeFitsText(tag: string, text: string): boolean {
  const language = languageOf(tag);
  const evident = evidentLanguage(text);
  if (evident.script === undefined || OTHER_SCRIPT_LANGUAGES.has(language)) return true;
  const tagScript = LANGUAGE_SCRIPT[language] ?? 'latin';
  // Chinese and Japanese share Han characters: Han text fits either.
  const sameScript =
    tagScript === evident.script ||
    (evident.script === 'han' && tagScript === 'kana') ||
    (evident.script === 'kana' && tagScript === 'han');
  if (!sameScript) return false;
  return evident.script !== 'latin' || evident.language === undefined || evident.language === language;
}

/**
 * The run's locale: the user's own choice when it is usable; otherwise the model's proposal when
 * it is a real tag that fits the question's evident language; otherwise detected from the
 * question. `replaced` says why the proposal was not taken, for a note.
 */
export function settleLocale(input: { requested?: string | undefined; proposed?: string | undefined; text: string }): {
  locale: string;
  replaced?: string;
} {
  const requested = canonicalLocale(input.requested);
  if (requested) return { locale: requested };
  const proposed = canonicalLocale(input.proposed);
  const detected = detectLocale(input.text);
  if (!proposed) return { locale: detected, replaced: `"${String(input.proposed ?? '').slice(0, 40)}" is not a language tag` };
  if (!localeFitsText(proposed, input.text)) {
    return { locale: detected, replaced: `${proposed} does not match the language the question is written in` };
  }
  return { locale: proposed };
}

// CJK full-text tokens (src/shared/cjk.ts) and how a collection's language is named.
import { describe, expect, it } from 'vitest';
import { cjkIndexText, cjkQueryText } from '../../src/shared/cjk';
import { collectionLanguage, isCjkLanguage } from '../../src/shared/knowledge';

const words = (s: string) => s.trim().split(/\s+/);

describe('CJK tokens', () => {
  it('cuts a run of Han characters into overlapping bigrams, indexing each character as well', () => {
    expect(words(cjkQueryText('太阳能电池'))).toEqual(['太阳', '阳能', '能电', '电池']);
    expect(words(cjkIndexText('太阳能电池'))).toEqual(['太', '太阳', '阳', '阳能', '能', '能电', '电', '电池', '池']);
  });

  it('keeps a lone character as itself, and splits runs at punctuation (NFKC makes ， a comma) and spaces', () => {
    expect(words(cjkQueryText('水'))).toEqual(['水']);
    expect(words(cjkQueryText('风电，光伏。储能'))).toEqual(['风电', ',', '光伏', '。', '储能']);
    expect(words(cjkQueryText('서울에서 부산까지'))).toEqual(['서울', '울에', '에서', '부산', '산까', '까지']);
  });

  it('leaves Latin words and numbers as words, separated from the CJK around them', () => {
    expect(words(cjkQueryText('使用GPU训练了3天'))).toEqual(['使用', 'GPU', '训练', '练了', '3', '天']);
    expect(words(cjkQueryText('LFP 电池 thermal runaway'))).toEqual(['LFP', '电池', 'thermal', 'runaway']);
  });

  it('treats Japanese kana (with ー) as part of a run, and folds full-width and half-width forms', () => {
    expect(words(cjkQueryText('コーヒー'))).toEqual(['コー', 'ーヒ', 'ヒー']);
    expect(words(cjkQueryText('ＧＰＵ２０２４ｶﾀ'))).toEqual(['GPU2024', 'カタ']);
    expect(words(cjkQueryText('富士山に登る'))).toEqual(['富士', '士山', '山に', 'に登', '登る']);
  });

  it('leaves text without CJK as it is', () => {
    expect(cjkIndexText('Battery storage: 4 hours')).toBe('Battery storage: 4 hours');
    expect(cjkQueryText('N-1 criterion, 45Y')).toBe('N-1 criterion, 45Y');
  });
});

describe('collection languages', () => {
  it.each([
    ['zh', 'chinese'],
    ['zh-CN', 'chinese'],
    ['zh_Hant_TW', 'chinese'],
    ['Chinese', 'chinese'],
    ['ja', 'japanese'],
    ['ja-JP', 'japanese'],
    ['japanese', 'japanese'],
    ['ko', 'korean'],
    ['ko-KR', 'korean'],
    ['KOREAN', 'korean'],
    ['en', 'english'],
    ['de-CH', 'german'],
    ['simple', 'simple'],
    ['pg_catalog.english', 'pg_catalog.english'],
  ])('%s is stored as %s', (given, stored) => {
    expect(collectionLanguage(given)).toBe(stored);
  });

  it('indexes only Chinese, Japanese and Korean by bigrams', () => {
    expect(['chinese', 'japanese', 'korean'].every(isCjkLanguage)).toBe(true);
    expect(['english', 'simple', 'zh'].some(isCjkLanguage)).toBe(false);
  });
});

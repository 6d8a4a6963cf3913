// The run's language decided by code: real BCP 47 tags only, the question's evident language over
// a model's contradicting tag, the user's own choice over both.
import { describe, expect, it } from 'vitest';
import { canonicalLocale, detectLocale, dominantScript, localeFitsText, settleLocale } from '../../src/shared/locale';
import { ResearchOptions } from '../../src/shared/schemas';

describe('canonicalLocale', () => {
  it('accepts real tags in canonical form', () => {
    expect(canonicalLocale('en-US')).toBe('en-US');
    expect(canonicalLocale('en-us')).toBe('en-US');
    expect(canonicalLocale('zh_CN')).toBe('zh-CN');
    expect(canonicalLocale('de')).toBe('de');
    expect(canonicalLocale(' pt-BR ')).toBe('pt-BR');
  });

  it('refuses words a weak model gave as tags, and tags of no language', () => {
    for (const bad of ['yes', 'rnl', 'researchtopic', 'english', 'und', '', 'en--US', 'x', null, undefined]) {
      expect(canonicalLocale(bad), String(bad)).toBeUndefined();
    }
  });

  it('is what the request option checks: "rnl" is refused, "de-DE" taken', () => {
    expect(ResearchOptions.safeParse({ locale: 'rnl' }).success).toBe(false);
    expect(ResearchOptions.safeParse({ locale: 'yes' }).success).toBe(false);
    expect(ResearchOptions.parse({ locale: 'de-DE' }).locale).toBe('de-DE');
  });
});

describe('language of a question', () => {
  it('tells scripts apart', () => {
    expect(dominantScript('太阳能发电成本下降了多少？')).toBe('han');
    expect(dominantScript('太陽光発電のコストはどれくらい下がりましたか')).toBe('kana');
    expect(dominantScript('태양광 발전 비용은 얼마나 떨어졌나요?')).toBe('hangul');
    expect(dominantScript('Насколько подешевела солнечная энергия?')).toBe('cyrillic');
    expect(dominantScript('كم انخفضت تكلفة الطاقة الشمسية؟')).toBe('arabic');
    expect(dominantScript('2010 → 2024?')).toBeUndefined();
  });

  it('detects a locale from the letters and, for Latin text, the stop words', () => {
    expect(detectLocale('How much cheaper has solar power become since 2010?')).toBe('en-US');
    expect(detectLocale('Wie stark sind die Kosten der Solarenergie seit 2010 gefallen?')).toBe('de-DE');
    expect(detectLocale('Comment le prix du solaire a-t-il évolué depuis 2010 ?')).toBe('fr-FR');
    expect(detectLocale('太阳能发电成本下降了多少？')).toBe('zh-CN');
    expect(detectLocale('Насколько подешевела солнечная энергия?')).toBe('ru-RU');
    expect(detectLocale('2010 → 2024?')).toBe('en-US');
  });

  it('finds a tag that contradicts the question', () => {
    const english = 'How much cheaper has solar power become since 2010?';
    expect(localeFitsText('en-GB', english)).toBe(true);
    expect(localeFitsText('zh-CN', english)).toBe(false);
    expect(localeFitsText('de-DE', english)).toBe(false);
    expect(localeFitsText('ja-JP', '太阳能发电成本下降了多少？')).toBe(true);
    expect(localeFitsText('en-US', '太阳能发电成本下降了多少？')).toBe(false);
    // Latin text without clear stop words does not contradict a Latin-script language.
    expect(localeFitsText('es-ES', 'Solar LCOE 2010')).toBe(true);
  });
});

describe('settleLocale', () => {
  const english = 'How much cheaper has solar power become since 2010?';

  it('keeps a model tag that fits the question', () => {
    expect(settleLocale({ proposed: 'en-GB', text: english })).toEqual({ locale: 'en-GB' });
  });

  it('replaces a tag that is no language, or of another language than the question', () => {
    expect(settleLocale({ proposed: 'yes', text: english })).toMatchObject({
      locale: 'en-US',
      replaced: expect.stringMatching(/not a language tag/),
    });
    expect(settleLocale({ proposed: 'zh-CN', text: english })).toMatchObject({
      locale: 'en-US',
      replaced: expect.stringMatching(/does not match/),
    });
    expect(settleLocale({ proposed: 'de-DE', text: english }).locale).toBe('en-US');
    // "no" is Norwegian, a real tag: it is the question's English that rules it out.
    expect(settleLocale({ proposed: 'no', text: english }).locale).toBe('en-US');
    expect(settleLocale({ text: 'Wie teuer ist Solarstrom heute in Deutschland?' }).locale).toBe('de-DE');
  });

  it('gives the user what they asked for, whatever the question is written in', () => {
    expect(settleLocale({ requested: 'de-DE', proposed: 'en-US', text: english })).toEqual({ locale: 'de-DE' });
    expect(settleLocale({ requested: 'fr-fr', text: english })).toEqual({ locale: 'fr-FR' });
  });
});

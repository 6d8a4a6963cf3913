// A long generated article (navigation, sections of paragraphs with relative links, tables, a
// script): for the extraction benchmark and the test of the extraction thread.
export function longPage(kb: number): string {
  const nav = `<nav><ul>${Array.from({ length: 40 }, (_, i) => `<li><a href="/topic/${i}">Topic ${i}</a></li>`).join('')}</ul></nav>`;
  const parts: string[] = [];
  for (let s = 0; parts.join('').length < kb * 1024; s++) {
    const rows = Array.from(
      { length: 8 },
      (_, r) => `<tr><td>${2010 + r}</td><td>${(0.4 - r * 0.04).toFixed(3)}</td><td>${r * 7}%</td></tr>`,
    );
    parts.push(
      `<section><h2>Section ${s}</h2>` +
        Array.from(
          { length: 5 },
          (_, p) =>
            `<p>Paragraph ${p} of section ${s}: solar and wind costs fell, see <a href="../notes/${s}-${p}.html">note ${s}.${p}</a> ` +
            'and the <em>detailed</em> figures below, which compare module prices, balance-of-system costs and financing across markets.</p>',
        ).join('') +
        `<table><thead><tr><th>Year</th><th>USD/kWh</th><th>Change</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`,
    );
  }
  return `<!doctype html><html><head><title>A long article</title><style>body{font:16px serif}</style></head><body>${nav}<main><article><h1>A long article</h1>${parts.join('')}</article></main><footer>© fixture</footer><script>var x=1</script></body></html>`;
}

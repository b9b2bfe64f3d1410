// A score trajectory drawn as one character per iteration, for status's JSON and its text.

const BARS = '▁▂▃▄▅▆▇█';
const ASCII_BARS = '_.-:=+*#';

/** One character per score, scaled between the lowest and highest shown; a crash is a gap (`·` / `x`). */
export function sparkline(scores: readonly (number | null)[], unicode: boolean): string {
  const bars = unicode ? BARS : ASCII_BARS;
  const values = scores.filter((s): s is number => s !== null);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return scores
    .map((score) => {
      if (score === null) return unicode ? '·' : 'x';
      if (max === min) return bars.charAt(bars.length - 1);
      const index = Math.round(((score - min) / (max - min)) * (bars.length - 1));
      return bars.charAt(index);
    })
    .join('');
}

// A small line diff for the review of an agent's cell edit: which lines of the previous source
// were kept, removed or added. Cells are small, so a longest-common-subsequence table over the
// lines between the common head and tail is enough; past `maxCells` (two long, wholly different
// sources) it falls back to "all old lines removed, all new added", which is still true.

export type DiffKind = 'same' | 'del' | 'add';

export interface IDiffLine {
  kind: DiffKind;
  text: string;
}

function lines(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

/** The lines of `before` and `after`, each marked kept, removed or added, in reading order. */
export function lineDiff(before: string, after: string, maxCells = 1_000_000): IDiffLine[] {
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
         a[a.length - 1 - tail] === b[b.length - 1 - tail]) {
    tail++;
  }
  const out: IDiffLine[] = a.slice(0, head).map(text => ({ kind: 'same', text }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (x.length * y.length > maxCells) {
    out.push(...x.map(text => ({ kind: 'del' as const, text })), ...y.map(text => ({ kind: 'add' as const, text })));
  } else {
    // lcs[i][j]: the longest common subsequence of x[i:] and y[j:]
    const lcs: Uint32Array[] = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        out.push({ kind: 'same', text: x[i++] });
        j++;
      } else if (j < y.length && (i === x.length || lcs[i][j + 1] > lcs[i + 1][j])) {
        out.push({ kind: 'add', text: y[j++] }); // removals first where either fits
      } else {
        out.push({ kind: 'del', text: x[i++] });
      }
    }
  }
  out.push(...a.slice(a.length - tail).map(text => ({ kind: 'same' as const, text })));
  return out;
}

/** "+2 −1": how many lines the edit added and removed. */
export function diffSummary(diff: IDiffLine[]): string {
  const added = diff.filter(d => d.kind === 'add').length;
  const removed = diff.filter(d => d.kind === 'del').length;
  return `+${added} −${removed}`;
}

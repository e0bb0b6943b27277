// What the kernel's Python side says too, said the same way here: a message's status words,
// a part's duration, durations, money and token counts. STATUS_WORDS is generated from
// forge_jupyter/message.py; the rest mirrors message.duration and forge_jupyter/render/numbers.py
// (seconds, money, usage). labextension/test/words.test.ts runs them on the inputs and the
// Python side's answers in test/words.cases.json (tests/browser/test_widget_words_js.py writes
// the answers and runs this test), and pins that they agree.
import type { Tokens } from "../protocol.generated.js";

export { STATUS_WORDS } from "../protocol.generated.js";

type Maybe<T> = T | null | undefined;

const missing = (v: unknown): v is null | undefined => v === null || v === undefined;

/** Seconds from a part's start to its end; null while it is open. */
export function duration(p: { time_start?: Maybe<number>; time_end?: Maybe<number> }): number | null {
  if (missing(p.time_start) || missing(p.time_end)) return null;
  return p.time_end - p.time_start;
}

export function seconds(s: Maybe<number>): string {
  if (missing(s) || Number.isNaN(s)) return "";
  if (s < 1) return `${Math.max(0, Math.round(s * 1000))} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

export function count(n: Maybe<number>): string {
  return Number(n || 0).toLocaleString("en-US");
}

export function money(cost: Maybe<number>): string {
  // numbers.py says why: inf/NaN have no price; past a trillion, scientific notation
  if (missing(cost) || !Number.isFinite(cost)) return "cost unknown";
  if (cost === 0) return "$0";
  if (Math.abs(cost) >= 1e12) return `$${cost.toExponential(1)}`;
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** "1,234 in · 56 out · $0.0012 · model" (≈ and "tokens estimated" where counted locally). */
export function usage(tokens: Maybe<Partial<Tokens>>, cost: Maybe<number>, model: Maybe<string>): string {
  const t = tokens || {};
  const approx = t.estimated ? "≈" : "";
  const bits = [`${approx}${count(t.input)} in`, `${approx}${count(t.output)} out`];
  if (t.reasoning) bits.push(`${count(t.reasoning)} reasoning`);
  if (t.cache_read) bits.push(`${count(t.cache_read)} cached`);
  bits.push(money(cost));
  if (model) bits.push(model);
  if (t.estimated) bits.push("tokens estimated");
  return bits.join(" · ");
}

// no space, control character or Unicode blank anywhere in a link (as sources.py spells it)
const SOURCE_URL = /^https?:\/\/[^\x00-\x20\x7f-\x9f\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+$/i;

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && !Array.isArray(v);

/** The pages a provider's web search cited (a text part's metadata.citations, as the wire had
 *  them: Anthropic's url/title, OpenAI's url_citation), once each, first cited first, as
 *  [url, title]; only absolute http(s) URLs, titles as plain text. Mirrors
 *  forge_jupyter/render/sources.py (cited_sources). */
export function citedSources(citations: unknown): [string, string][] {
  const out: [string, string][] = [];
  const seen = new Set<string>();
  for (const item of Array.isArray(citations) ? citations as unknown[] : []) {
    if (!isObject(item)) continue;
    const inner = item.url_citation;
    const source = isObject(inner) ? inner : item;
    const { url, title } = source;
    if (typeof url !== "string" || Array.from(url).length > 2048 || !SOURCE_URL.test(url)
        || seen.has(url)) continue;
    seen.add(url);
    let words = typeof title === "string"
      ? title.replace(/[\x00-\x20\x7f]/g, " ").split(" ").filter(Boolean).join(" ") : "";
    const chars = Array.from(words);
    if (chars.length > 120) words = chars.slice(0, 119).join("") + "…";
    out.push([url, words || url]);
    if (out.length === 20) break;
  }
  return out;
}

/** (the status word, what follows it): a reason that already starts with the word is said
 * once — ["Stopped", " by the user"], not "Stopped: stopped by the user" (render/numbers.py, status_words). */
export function statusWords(word: string, why: string): [string, string] {
  if (why.toLowerCase().startsWith(word.toLowerCase())) {
    const rest = why.slice(word.length);
    if (rest === "" || rest[0] === " " || rest[0] === ":") return [word, rest];
  }
  return [word, `: ${why}`];
}

/** A tool's output as the person reads it: the lines that stand for an image for the model
 * ("[image/png 572×454, shown to the user]") left out where the image itself is shown
 * (render/record.py, person_output); null for a call with no output; "" when only they were. */
export function displayed(p: { output?: string | null; metadata?: Record<string, unknown> | null },
  imagesShown: boolean): string | null {
  if (p.output === null || p.output === undefined) return null;
  const stand = p.metadata && Array.isArray(p.metadata.displays) ? p.metadata.displays as unknown[] : [];
  if (!imagesShown || !stand.length) return p.output;
  const said = new Set(stand.map(d => `[${String(d)}]`));
  return p.output.split("\n").filter(line => !said.has(line)).join("\n").replace(/\n+$/, "");
}

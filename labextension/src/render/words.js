// What the kernel's Python side says too, said the same way here: a message's status words,
// a part's duration, durations, money and token counts. Mirrored from forge_jupyter/model.py
// (STATUS_WORDS, duration) and forge_jupyter/render/numbers.py (seconds, money, usage);
// tests/browser/test_widget_words_js.py runs both on the same inputs and pins that they agree.

export const STATUS_WORDS = { error: "Error", aborted: "Stopped", interrupted: "Interrupted" };

const missing = (v) => v === null || v === undefined;

/** Seconds from a part's start to its end; null while it is open. */
export function duration(p) {
  if (missing(p.time_start) || missing(p.time_end)) return null;
  return p.time_end - p.time_start;
}

export function seconds(s) {
  if (missing(s) || Number.isNaN(s)) return "";
  if (s < 1) return `${Math.max(0, Math.round(s * 1000))} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}

export function money(cost) {
  // numbers.py says why: inf/NaN have no price; past a trillion, scientific notation
  if (missing(cost) || !Number.isFinite(cost)) return "cost unknown";
  if (cost === 0) return "$0";
  if (Math.abs(cost) >= 1e12) return `$${cost.toExponential(1)}`;
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** "1,234 in · 56 out · $0.0012 · model" (≈ and "tokens estimated" where counted locally). */
export function usage(tokens, cost, model) {
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

/** The pages a provider's web search cited (a text part's metadata.citations, as the wire had
 *  them: Anthropic's url/title, OpenAI's url_citation), once each, first cited first, as
 *  [url, title]; only absolute http(s) URLs, titles as plain text. Mirrors
 *  forge_jupyter/render/sources.py (cited_sources). */
export function citedSources(citations) {
  const out = [];
  const seen = new Set();
  for (const item of Array.isArray(citations) ? citations : []) {
    if (!item || typeof item !== "object" || Array.isArray(item)) continue;
    const inner = item.url_citation;
    const source = inner && typeof inner === "object" && !Array.isArray(inner) ? inner : item;
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

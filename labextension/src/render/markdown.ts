// Model output is untrusted: Markdown → HTML (marked) → DOMPurify with a narrow profile.
// No scripts, event handlers, styles, forms, frames or objects; links open in a new tab with
// rel="noopener noreferrer"; only inline data: images load (a remote image URL in model text
// is a way to send data out of the notebook, so it becomes a plain link instead).
import DOMPurify, { type Config } from "dompurify";
import { Marked } from "marked";

import { addCodeActions } from "./keep.js";

/** The one Markdown parser (GitHub-flavoured, synchronous); ./stream.ts lexes with its options. */
export const marked = new Marked({ gfm: true, breaks: false, async: false });
const purify = DOMPurify(window);

const SAFE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,/i;
const FORBID_TAGS = [
  "style", "link", "meta", "base", "form", "input", "button", "textarea", "select", "option",
  "iframe", "frame", "frameset", "object", "embed", "applet", "audio", "video", "source",
  "track", "dialog", "template", "svg", "math", "noscript",
];
const CONFIG: Config & { RETURN_DOM_FRAGMENT: true } = {
  USE_PROFILES: { html: true },
  FORBID_TAGS,
  FORBID_ATTR: ["style", "id", "name", "srcset", "action", "formaction", "ping", "target"],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
  // Parse as the inside of <body> from the first character: then a piece of a text
  // (./stream.ts) that starts with a <script> or a comment sanitizes as it does in the whole.
  FORCE_BODY: true,
};

// Parsed once: given on each call, DOMPurify parses its config again every time (a streamed
// answer sanitizes its open tail on every update, in the cell and in the panel).
purify.setConfig(CONFIG);

purify.addHook("uponSanitizeAttribute", (node, data) => {
  // Classes only where marked puts them (code language); model text cannot borrow ours.
  if (data.attrName === "class" && node.nodeName !== "CODE") data.keepAttr = false;
});

purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  } else if (node.nodeName === "IMG") {
    const src = node.getAttribute("src") || "";
    if (!SAFE_IMAGE.test(src)) {
      node.removeAttribute("src");
      node.setAttribute("data-blocked-src", src);
    }
  }
});

function unblockAsLinks(fragment: DocumentFragment): DocumentFragment {
  for (const img of fragment.querySelectorAll("img[data-blocked-src]")) {
    const src = img.getAttribute("data-blocked-src") || "";
    const label = `image: ${img.getAttribute("alt") || src || "(no address)"}`;
    let repl: HTMLElement;
    if (/^https?:\/\//i.test(src)) {
      const link = document.createElement("a");
      link.href = src;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.title = "Remote images in model output are not loaded; open it yourself if you trust it";
      repl = link;
    } else {
      repl = document.createElement("span");
    }
    repl.className = "forge-blocked-image";
    repl.textContent = `[${label}]`;
    img.replaceWith(repl);
  }
  return fragment;
}

/** A sanitized DocumentFragment for `html` (what marked made of model text). */
export function sanitizeHtml(html: string): DocumentFragment {
  return addCodeActions(unblockAsLinks(purify.sanitize(html) as unknown as DocumentFragment));
}

/** A sanitized DocumentFragment for `text` (Markdown as the model wrote it). */
export function renderMarkdown(text: string | null | undefined): DocumentFragment {
  return sanitizeHtml(marked.parse(text || "") as string); // a string: the parser is not async
}

// The turn's DOM: a header (status, Stop), notices, then each message's parts in id order.
// Redraws happen at most once per animation frame, together with the page's other views and
// paced by what frames cost (./frames.ts), and only for what changed.
// What a part shows is decided in partEl: a new part type (forge_jupyter/message.py, typed in
// ../protocol.generated.ts) is drawn by one more case there.
import type {
  CompactionPart, Message, Part, PatchPart, ReasoningPart, RetryPart, StepFinishPart, TextPart,
  ToolPart, ViewMessage, WidgetMessage
} from "../protocol.generated.js";
import { codeBlock, codeLanguage, isBlock } from "./code.js";
import { h, insertSorted, restoreUi, saveUi } from "./dom.js";
import { cancelDraw, drawSoon } from "./frames.js";
import { canInsert, insertCell, outputsOf } from "./keep.js";
import { renderMarkdown } from "./markdown.js";
import { canRevert, revertButton } from "./revert.js";
import { LiveMarkdown } from "./stream.js";
import { type Asked, type Decision, isQuestion, receive, TurnState } from "./state.js";
import { citedSources, count, displayed, duration, seconds, STATUS_WORDS, statusWords, usage } from "./words.js";

const LONG_OUTPUT_LINES = 12;
const LONG_OUTPUT_CHARS = 1500;
const LONG_DIFF_LINES = 40;
const IMAGE_MIMES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

// benchmarks/bench_stream_render.py sets this to measure the renderer before ./stream.ts:
// the whole Markdown rendered again, and the part's element replaced, on every update.
const renderWhole = (): boolean => (globalThis as { forgeRenderWhole?: boolean }).forgeRenderWhole === true;
// The benchmark's middle row: finished blocks kept but laid out and painted on every frame,
// on screen or not (what the panel paid before .forge-md-live, widget.css).
const layOutAll = (): boolean => (globalThis as { forgeLayOutAll?: boolean }).forgeLayOutAll === true;
// The benchmark's rows before ./frames.ts: each view drew in an animation frame of its own.
const framePerView = (): boolean => (globalThis as { forgeFramePerView?: boolean }).forgeFramePerView === true;

/** What a view talks to: the anywidget model in a cell, the panel's CommModel there. */
export interface Host {
  get(key: string): unknown;
  send(msg: ViewMessage): void;
}

interface MessageNode {
  el: HTMLElement;
  partsEl: HTMLElement;
  statusEl: HTMLElement;
}

export class TurnView {
  readonly model: Host;
  readonly state: TurnState;
  synced: boolean;
  private frame: number;
  private readonly drawNow = (): void => this.draw();
  private stopping: boolean;
  private readonly runningSince: Map<string, number>;
  private readonly startedAt: number;
  private readonly partNodes: Map<string, HTMLElement>;
  private readonly messageNodes: Map<string, MessageNode>;
  // A streamed text's or reasoning's element, kept across updates so finished blocks stay.
  private readonly markdown: Map<string, LiveMarkdown>;
  private readonly reasoningNodes: Map<string, HTMLDetailsElement>;
  private readonly statusEl: HTMLElement;
  private readonly elapsedEl: HTMLElement;
  private readonly stopEl: HTMLButtonElement;
  private readonly revertEl: HTMLButtonElement;
  private readonly noticesEl: HTMLElement;
  private readonly orphansEl: HTMLElement;
  private readonly bodyEl: HTMLElement;
  readonly root: HTMLElement;
  private readonly waitingEl: HTMLButtonElement;
  // Pending approvals in view or not (IntersectionObserver), for the header's signpost.
  private readonly inView: Map<string, boolean>;
  private readonly watcher: IntersectionObserver | null;
  private readonly knownAsks: Set<string>;
  private answeredHere: boolean;
  private readonly ticker: ReturnType<typeof setInterval>;
  private readonly resync: ReturnType<typeof setInterval>;

  constructor(el: HTMLElement, model: Host) {
    this.model = model;
    this.state = new TurnState();
    // Until the first snapshot: what the kernel said at display time (a first call loading).
    const loading = model.get("loading");
    if (loading) this.state.status = { status: "loading", detail: { message: loading } };
    this.synced = false;
    this.frame = 0;
    this.stopping = false;
    this.runningSince = new Map(); // part id -> performance.now() when first seen running
    this.startedAt = performance.now();
    this.partNodes = new Map();
    this.messageNodes = new Map();
    this.markdown = new Map();
    this.reasoningNodes = new Map();

    this.statusEl = h("span", { class: "forge-status", "data-testid": "status" });
    this.elapsedEl = h("span", { class: "forge-elapsed" });
    this.stopEl = h("button", {
      class: "forge-stop", type: "button", "data-testid": "stop", title: "Stop this run",
      onclick: () => this.stop(),
    }, "Stop");
    // Once the turn is done, where a notebook can take it back (./revert.ts)
    this.revertEl = revertButton(() => {
      const id = this.promptId();
      return id ? { message_id: id } : null;
    });
    this.revertEl.hidden = true;
    // "2 approvals waiting ↓": where the asks are when one is out of view or several wait.
    this.waitingEl = h("button", {
      class: "forge-waiting", type: "button", "data-testid": "approvals-waiting", hidden: true,
      title: "Show the call waiting for you", onclick: () => this.showWaiting(),
    });
    this.inView = new Map();
    this.knownAsks = new Set();
    this.answeredHere = false;
    this.watcher = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver((entries) => {
      for (const e of entries) this.inView.set((e.target as HTMLElement).dataset.requestId || "", e.isIntersecting);
      this.drawWaiting();
    });
    this.noticesEl = h("div", { class: "forge-notices" });
    this.orphansEl = h("div", { class: "forge-approvals" });
    this.bodyEl = h("div", { class: "forge-body" });
    this.root = h("div", { class: "forge-turn", "data-testid": "forge-turn" },
      h("div", { class: "forge-header" }, this.statusEl, this.waitingEl, this.elapsedEl,
        h("span", { class: "forge-spacer" }), this.stopEl, this.revertEl),
      this.noticesEl, this.orphansEl, this.bodyEl);
    // JupyterLab's rich-text rules, as on the record that replaces this view when the turn ends
    // (a text/html output): the answer does not reflow then (render/look.py).
    el.classList.add("forge-widget", "jp-RenderedHTMLCommon");
    el.append(this.root);
    this.ticker = setInterval(() => this.tick(), 1000);
    // Ask again if the snapshot never came (a message lost while the kernel was busy).
    this.resync = setInterval(() => this.synced || this.send({ type: "hello" }), 3000);
    this.draw();
  }

  send(msg: ViewMessage): void {
    try {
      this.model.send(msg);
    } catch (err) {
      console.warn("forge widget: message not sent", err);
    }
  }

  dispose(): void {
    clearInterval(this.ticker);
    clearInterval(this.resync);
    if (this.frame) cancelAnimationFrame(this.frame);
    cancelDraw(this.drawNow);
    if (this.watcher) this.watcher.disconnect();
  }

  // -- messages from the kernel ------------------------------------------------------------

  onMessage(msg: WidgetMessage): void {
    const result = receive(this.state, msg, this.synced);
    if (result === "synced") {
      this.synced = true;
      this.state.dirty.all = true;
    } else if (result === "resync") {
      this.synced = false;
      this.send({ type: "hello" });
      return;
    } else if (result !== "applied") {
      return;
    }
    this.root.dataset.seq = String(this.state.seq);
    this.schedule();
  }

  schedule(): void {
    if (!framePerView()) {
      drawSoon(this.drawNow);
    } else if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  // -- actions -----------------------------------------------------------------------------

  stop(): void {
    this.stopping = true;
    this.stopEl.disabled = true;
    this.stopEl.textContent = "Stopping…";
    this.send({ type: "stop" });
  }

  answer(request: Asked, answer: "once" | "session" | "deny", wrap: HTMLElement): void {
    const input = wrap.querySelector("input");
    const reason = input ? input.value.trim() : "";
    for (const b of wrap.querySelectorAll("button")) b.disabled = true;
    wrap.dataset.sending = answer;
    this.answeredHere = true; // the person is here: the next ask is brought into view
    this.send({ type: "approve", request_id: request.id, answer, reason: reason || null });
  }

  reply(request: Asked, text: string, wrap: HTMLElement): void {
    for (const el of wrap.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input")) el.disabled = true;
    wrap.dataset.sending = "answer";
    this.send({ type: "answer", request_id: request.id, text });
  }

  // -- drawing -----------------------------------------------------------------------------

  draw(): void {
    cancelDraw(this.drawNow); // drawn now: not again in the shared frame
    const s = this.state;
    const d = s.dirty;
    if (d.all) {
      const saved = saveUi(this.root);
      this.bodyEl.replaceChildren();
      this.partNodes.clear();
      this.messageNodes.clear();
      for (const m of s.orderedMessages()) {
        this.drawMessage(m);
        for (const p of s.partsOf(m.id)) this.drawPart(p);
      }
      this.drawOrphanApprovals();
      restoreUi(this.root, saved);
    } else {
      for (const id of d.messages) {
        const m = s.messages.get(id);
        if (m) this.drawMessage(m);
      }
      for (const id of d.parts) {
        const p = s.parts.get(id);
        if (p) this.drawPart(p);
      }
    }
    if (d.header || d.all) {
      this.drawHeader();
      this.drawNotices();
    }
    this.root.dataset.running = String(s.running);
    this.watchAsks();
    s.dirty = { all: false, parts: new Set(), messages: new Set(), header: false };
  }

  tick(): void {
    if (this.state.running) {
      this.elapsedEl.textContent = wholeSeconds((performance.now() - this.startedAt) / 1000);
    }
    for (const el of this.root.querySelectorAll<HTMLElement>("[data-running-since]")) {
      const since = Number(el.dataset.runningSince);
      el.textContent = wholeSeconds((performance.now() - since) / 1000);
    }
  }

  drawHeader(): void {
    const s = this.state;
    let label: string;
    let kind: string;
    const last = s.orderedMessages().filter((m) => m.role === "assistant").pop();
    if (!s.running) {
      kind = last && last.status !== "running" ? last.status : "completed";
      label = kind === "completed" ? "Done" : STATUS_WORDS[kind] || kind;
    } else if (s.pendingApprovals().length) {
      kind = "approval";
      label = s.pendingApprovals().some(isQuestion)
        ? "Waiting for your answer" : "Waiting for your approval";
    } else if (s.status.status === "retry") {
      kind = "retry";
      const { attempt, wait } = s.status.detail as { attempt?: number; wait?: number };
      label = `Retrying${attempt ? ` (attempt ${attempt + 1})` : ""}${wait ? ` in ${seconds(wait)}` : ""}…`;
    } else if (s.loading) {
      kind = "loading";
      label = (s.status.detail.message as string) || "Loading…";
    } else if (s.status.status === "compacting") {
      kind = "running";
      label = "Compacting the context…";
    } else {
      kind = "running";
      label = this.stopping ? "Stopping…" : "Working…";
    }
    this.statusEl.dataset.status = kind;
    this.statusEl.replaceChildren(h("span", { class: "forge-dot" }), label);
    this.stopEl.hidden = !s.running;
    if (!s.running) this.elapsedEl.textContent = "";
    this.revertEl.hidden = s.running || !canRevert() || !this.promptId();
  }

  /** The turn's prompt (the user message its first answer replies to), once it has one. */
  promptId(): string | null {
    const first = this.state.orderedMessages().find((m) => m.role === "assistant" && m.parent_id);
    return first ? first.parent_id : null;
  }

  /** The pending asks' elements, in the order they are drawn. */
  pendingAskEls(): HTMLElement[] {
    return [...this.root.querySelectorAll<HTMLElement>(".forge-approval[data-request-id]:not([data-answer])")];
  }

  // Observe the asks drawn now; a new one, after the person answered one here, is scrolled to.
  watchAsks(): void {
    const els = this.pendingAskEls();
    if (this.watcher) {
      this.watcher.disconnect();
      for (const el of els) this.watcher.observe(el);
    }
    const ids = new Set(els.map((el) => el.dataset.requestId || ""));
    for (const id of [...this.inView.keys()]) if (!ids.has(id)) this.inView.delete(id);
    const fresh = els.filter((el) => !this.knownAsks.has(el.dataset.requestId || ""));
    for (const el of fresh) this.knownAsks.add(el.dataset.requestId || "");
    if (fresh.length && this.answeredHere) requestAnimationFrame(() => bringIntoView(fresh[0]));
    this.drawWaiting();
  }

  drawWaiting(): void {
    const els = this.pendingAskEls();
    const unseen = els.filter((el) => this.inView.get(el.dataset.requestId || "") === false);
    const show = this.state.running && (els.length > 1 || unseen.length > 0);
    this.waitingEl.hidden = !show;
    if (!show) return;
    const questions = els.filter((el) => el.classList.contains("forge-question")).length;
    const word = questions === els.length ? "question" : questions ? "request" : "approval";
    this.waitingEl.textContent = `${els.length} ${word}${els.length === 1 ? "" : "s"} waiting ↓`;
  }

  /** The signpost's click: the first ask out of view (else the first) into view. */
  showWaiting(): void {
    const els = this.pendingAskEls();
    const target = els.find((el) => this.inView.get(el.dataset.requestId || "") === false) || els[0];
    if (target) bringIntoView(target);
  }

  drawNotices(): void {
    this.noticesEl.replaceChildren(...this.state.notices.map((n) =>
      h("div", { class: "forge-notice", "data-testid": "notice", "data-level": n.level }, n.message)));
  }

  drawOrphanApprovals(): void {
    const orphans = [...this.state.approvals.values()].filter((a) => !this.state.parts.has(a.part_id));
    this.orphansEl.replaceChildren(...orphans.map((a) => this.approvalEl(a, true)).filter((e): e is HTMLElement => !!e));
  }

  messageNode(m: Pick<Message, "id" | "role">): MessageNode {
    let node = this.messageNodes.get(m.id);
    if (!node) {
      const partsEl = h("div", { class: "forge-parts" });
      const statusEl = h("div", { class: "forge-message-status" });
      const el = h("section", { class: "forge-message", "data-id": m.id, "data-role": m.role },
        partsEl, statusEl);
      insertSorted(this.bodyEl, el, m.id);
      node = { el, partsEl, statusEl };
      this.messageNodes.set(m.id, node);
    }
    return node;
  }

  drawMessage(m: Message): void {
    if (m.role !== "assistant" && !this.messageNodes.has(m.id)) return; // created by its parts
    const node = this.messageNode(m);
    node.el.dataset.status = m.status;
    node.el.classList.toggle("forge-summary", Boolean(m.summary));
    node.statusEl.replaceChildren();
    const title = STATUS_WORDS[m.status];
    if (title) {
      const [word, rest] = statusWords(title, m.error ? m.error.message : m.status);
      node.statusEl.append(h("div", {
        class: `forge-message-error forge-${m.status}`, "data-testid": "message-error",
        "data-status": m.status,
      }, h("strong", {}, rest.startsWith(": ") ? `${word}:` : word), rest.startsWith(": ") ? ` ${rest.slice(2)}` : rest));
    }
  }

  drawPart(p: Part): void {
    const m = this.state.messages.get(p.message_id);
    if (m && m.role === "user" && p.type !== "compaction") return;
    const el = this.partEl(p, m);
    const old = this.partNodes.get(p.id);
    if (!el) {
      if (old) old.remove();
      this.partNodes.delete(p.id);
      return;
    }
    el.dataset.id = p.id;
    if (old === el) return; // updated in place (a streaming text)
    if (old) {
      const saved = saveUi(old);
      old.replaceWith(el);
      restoreUi(el, saved);
    } else {
      const node = this.messageNode(m || { id: p.message_id, role: "assistant" });
      insertSorted(node.partsEl, el, p.id);
    }
    this.partNodes.set(p.id, el);
  }

  partEl(p: Part, m: Message | undefined): HTMLElement | null {
    switch (p.type) {
      case "text": return this.textEl(p, m);
      case "reasoning": return this.reasoningEl(p);
      case "tool": return this.toolEl(p);
      case "step-finish": return this.stepEl(p);
      case "retry": return this.retryEl(p);
      case "compaction": return this.compactionEl(p);
      case "patch": return this.patchEl(p);
      case "subtask":
        return h("div", { class: "forge-subtask", "data-testid": "subtask" },
          h("span", { class: "forge-label" }, "Subtask"), " ", h("code", {}, p.agent), " ",
          p.description || p.prompt);
      case "file":
        if (p.image) return null; // a chart a call showed: its card shows it, not a file line
        return h("div", { class: "forge-file", "data-testid": "file" },
          h("span", { class: "forge-label" }, "File"), " ", h("code", {}, p.filename || p.path || p.url || ""));
      case "agent":
        return h("div", { class: "forge-agent-ref" }, h("code", {}, `@${p.name}`));
      default:
        return null; // step-start and future types: nothing to show
    }
  }

  // The part's Markdown in its kept element, updated for what changed since the last frame.
  liveMarkdown(id: string, cls: string, text: string | null | undefined): HTMLElement {
    if (renderWhole()) return h("div", { class: cls }, renderMarkdown(text));
    let live = this.markdown.get(id);
    if (!live) {
      live = new LiveMarkdown(h("div", {}));
      this.markdown.set(id, live);
    }
    // Written only when it changes: setting the class again restyles the whole answer below it.
    const classes = layOutAll() ? cls : `${cls} forge-md-live`;
    if (live.el.className !== classes) live.el.className = classes;
    live.update(text);
    return live.el;
  }

  textEl(p: TextPart, m: Message | undefined): HTMLElement {
    const streaming = p.time_end === null || p.time_end === undefined;
    const body = this.liveMarkdown(p.id, `forge-text forge-md${p.synthetic ? " forge-synthetic" : ""}`, p.text);
    if (body.dataset.testid !== "text") body.dataset.testid = "text";
    if (body.dataset.streaming !== String(streaming)) body.dataset.streaming = String(streaming);
    if (m && m.summary) {
      return h("details", { class: "forge-summary-text", "data-key": `summary:${p.id}` },
        h("summary", {}, "Summary of the earlier conversation"), body);
    }
    const sources = citedSources((p.metadata || {}).citations);
    return sources.length ? h("div", {}, body, sourcesEl(sources)) : body;
  }

  reasoningEl(p: ReasoningPart): HTMLElement {
    const streaming = p.time_end === null || p.time_end === undefined;
    let label = "Reasoning";
    if (streaming) label = "Thinking…";
    else if (duration(p) !== null) label = `Thought for ${seconds(duration(p))}`;
    const tail = streaming ? (p.text || "").trim().split("\n").pop()!.slice(-90) : "";
    const summary = h("summary", {}, h("span", { class: "forge-label" }, label),
      tail ? h("span", { class: "forge-reasoning-tail" }, tail) : null);
    const body = this.liveMarkdown(p.id, "forge-md forge-reasoning-body", p.text);
    let details = this.reasoningNodes.get(p.id);
    if (!details || renderWhole()) {
      details = h("details", {
        class: "forge-reasoning", "data-testid": "reasoning", "data-key": `reasoning:${p.id}`,
      }, summary, body);
      this.reasoningNodes.set(p.id, details);
    } else {
      details.firstElementChild!.replaceWith(summary); // the body, and open or not, stay
    }
    details.dataset.streaming = String(streaming);
    return details;
  }

  toolEl(p: ToolPart): HTMLElement {
    const s = this.state;
    const approval = s.approvalFor(p.id);
    const waiting = approval && approval.answer === null;
    if (p.state === "running" && !this.runningSince.has(p.id)) this.runningSince.set(p.id, performance.now());
    let took: HTMLElement | null = null;
    if (duration(p) !== null) took = h("span", { class: "forge-duration", "data-testid": "tool-duration" }, seconds(duration(p)));
    else if (p.state === "running") {
      const since = this.runningSince.get(p.id)!;
      took = h("span", { class: "forge-duration", "data-running-since": String(since) }, wholeSeconds((performance.now() - since) / 1000));
    }
    const denied = p.state === "error" && p.metadata && p.metadata.permission === "denied";
    const decision = s.decisions.get(p.id);
    let stateLabel: string = p.state;
    if (waiting) stateLabel = isQuestion(approval) ? "awaiting your answer" : "awaiting approval";
    else if (denied) stateLabel = "denied";
    // A title that only repeats the tool's name says nothing ("variables — variables").
    const title = p.title && p.title !== p.tool ? p.title : summarizeInput(p);
    const card = h("div", {
      class: "forge-tool", "data-testid": "tool", "data-state": denied ? "denied" : p.state,
      "data-tool": p.tool,
    }, h("div", { class: "forge-tool-head" },
      h("span", { class: "forge-tool-icon", "aria-hidden": "true" }),
      h("span", { class: "forge-tool-name" }, p.tool || "(unnamed tool)"),
      h("span", { class: "forge-tool-title", title }, title), // clipped to fit: whole on hover
      h("span", { class: "forge-tool-state", "data-testid": "tool-state" }, stateLabel),
      took));
    const args = this.argsEl(p, Boolean(waiting) && !isQuestion(approval!));
    if (args) card.append(args); // a pending card has no arguments yet: nothing, not "null"
    const live = s.outputs.get(p.id);
    if (live && !(p.state === "completed" && p.output)) {
      card.append(h("pre", { class: "forge-tool-live", "data-testid": "tool-live-output" }, live));
    }
    const images = (s.displays.get(p.id) || []).length > 0;
    const shown = displayed(p, images);
    // an output that only named the images shown below it says nothing to the person
    if (p.state === "completed" && shown !== null && (shown || !images)) card.append(this.outputEl(p, shown));
    if (denied) {
      card.append(h("div", { class: "forge-tool-denied", "data-testid": "tool-denied" },
        decision ? decisionText(decision) : "Denied.",
        h("pre", { class: "forge-tool-error", "data-testid": "tool-error" }, p.error || "")));
    } else if (p.state === "error" && p.error) {
      card.append(h("pre", { class: "forge-tool-error", "data-testid": "tool-error" }, p.error));
    }
    const displays = s.displays.get(p.id) || [];
    if (displays.length) card.append(h("div", { class: "forge-displays" }, displays.map(displayEl)));
    const code = p.tool === "python" && p.input ? p.input.code : null;
    if (typeof code === "string" && code && canInsert() && (p.state === "completed" || p.state === "error")) {
      // the code, and what it showed if it ran (not a denied call's refusal)
      const outputs = denied ? [] : outputsOf(p.state === "completed" ? shown || null : null,
        p.state === "error" ? p.error || null : null, displays);
      card.append(h("div", { class: "forge-tool-keep" }, h("button", {
        type: "button", class: "forge-tool-insert", "data-testid": "tool-insert",
        title: "Insert this code as a new cell below the active one" + (outputs.length ? ", with its output" : ""),
        onclick: (e: MouseEvent) => {
          const button = e.currentTarget as HTMLButtonElement;
          button.textContent = insertCell(button, code, outputs) ? "Inserted" : "No notebook open";
        },
      }, "Insert as cell")));
    }
    const asked = approval ? this.approvalEl(approval, false) : null;
    if (asked) card.append(asked);
    // Scroll live output to its end after it is in the document.
    requestAnimationFrame(() => {
      const pre = card.querySelector<HTMLElement>(".forge-tool-live");
      if (pre) pre.scrollTop = pre.scrollHeight;
    });
    return card;
  }

  // While the call waits for approval its arguments are open (the code the person judges);
  // once decided they fold as before: another key, so a fold saved before the ask does not
  // close them.
  argsEl(p: ToolPart, asked: boolean): HTMLElement | null {
    // with what the tool looked up for the person to judge (notebook_run: the cell's source)
    const shown = p.metadata && typeof p.metadata.shown === "object" && !Array.isArray(p.metadata.shown)
      ? p.metadata.shown as Record<string, unknown> : {};
    const rows = argRows(p.tool, { ...(p.input || {}), ...shown }, p.id);
    if (p.raw_input) rows.unshift(h("pre", {}, p.raw_input));
    if (!rows.length) return null;
    return h("details", {
      class: "forge-tool-args", "data-testid": "tool-args", "data-key": `${asked ? "args-asked" : "args"}:${p.id}`,
      open: asked,
    }, h("summary", {}, "Arguments"), rows);
  }

  outputEl(p: ToolPart, shown: string): HTMLElement {
    const text = shown || "(no output)";
    const lines = text.split("\n").length;
    const truncated = p.metadata && p.metadata.truncated as { saved?: string } | undefined;
    const note = truncated
      ? h("div", { class: "forge-note" }, `The model saw a shortened output; the full output is saved at ${truncated.saved || "the session's output folder"}.`)
      : null;
    if (lines > LONG_OUTPUT_LINES || text.length > LONG_OUTPUT_CHARS) {
      return h("details", { class: "forge-tool-output", "data-testid": "tool-output", "data-key": `out:${p.id}` },
        h("summary", {}, `Output · ${count(lines)} lines`), h("pre", {}, text), note);
    }
    return h("div", { class: "forge-tool-output", "data-testid": "tool-output" }, h("pre", {}, text), note);
  }

  approvalEl(a: Asked, orphan: boolean): HTMLElement | null {
    if (isQuestion(a)) return this.questionEl(a);
    const wrap = h("div", { class: "forge-approval", "data-testid": "approval", "data-request-id": a.id });
    if (a.answer !== null) {
      const decision = this.state.decisions.get(a.part_id);
      wrap.dataset.answer = a.answer;
      if (a.answer === "deny" && !orphan && this.state.parts.has(a.part_id)
          && ((this.state.parts.get(a.part_id) as ToolPart).state === "error")) {
        return null; // the card says it: "denied by you, in the widget — reason"
      }
      wrap.append(h("div", { class: "forge-approval-answer", "data-testid": "approval-answer" },
        decisionText(decision || { answer: a.answer, reason: a.reason })));
      return wrap;
    }
    wrap.append(h("div", { class: "forge-approval-question" },
      "Allow ", h("code", {}, a.tool), " to run?",
      a.rule ? h("span", { class: "forge-approval-rule" }, ` (rule ${a.rule})`) : null));
    if (orphan && a.input) wrap.append(h("div", { class: "forge-tool-args" }, argRows(a.tool, a.input, a.id)));
    const reason = h("input", {
      class: "forge-approval-reason", type: "text", "data-testid": "approval-reason",
      "data-key": `reason:${a.id}`, placeholder: "Reason (optional, the model reads it)",
    });
    const button = (answer: "once" | "session" | "deny", label: string, testid: string, cls: string,
      title?: string) => h("button", {
      type: "button", class: `forge-button ${cls}`, "data-testid": testid, title,
      onclick: () => this.answer(a, answer, wrap),
    }, label);
    wrap.append(h("div", { class: "forge-approval-actions" },
      button("once", "Allow once", "approve-once", "forge-primary"),
      // The grant lives in the kernel's process (session/approval.py): a restart ends it.
      button("session", "Allow until kernel restarts", "approve-session", "",
        "Allow this tool's later calls in this session unasked, until the kernel restarts"),
      button("deny", "Deny", "deny", "forge-danger"),
      reason));
    return wrap;
  }

  // The question tool's card: the question, its options as buttons, a text box for any other
  // answer; once over, what was answered (or why not). All text nodes: nothing is HTML.
  questionEl(a: Asked & { kind: "question"; question: string; options: string[] }): HTMLElement {
    const wrap = h("div", { class: "forge-approval forge-question", "data-testid": "question",
      "data-request-id": a.id }, h("div", { class: "forge-question-text", "data-testid": "question-text" }, a.question || ""));
    if (a.answer !== null) {
      wrap.dataset.answer = a.answer;
      const who = a.by && a.by !== "user" && a.by !== "forge" ? ` by ${WHO[a.by] || a.by}` : "";
      wrap.append(h("div", { class: "forge-approval-answer", "data-testid": "question-answer" },
        a.answer === "answered" ? `Answered${who}: ${a.text}` : `Not answered — ${a.reason || "the question is over"}`));
      return wrap;
    }
    const input = h("input", {
      class: "forge-approval-reason", type: "text", maxlength: "10000", "data-testid": "question-input",
      "data-key": `answer:${a.id}`, placeholder: "Your answer (or pick an option)",
      onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter") { e.preventDefault(); send(input.value); } },
    });
    const send = (text: string): void => (text.trim() ? this.reply(a, text.trim(), wrap) : input.focus());
    const options = (a.options || []).map((o) => h("button", {
      type: "button", class: "forge-button", "data-testid": "question-option", onclick: () => send(o),
    }, o));
    if (options.length) wrap.append(h("div", { class: "forge-approval-actions" }, options));
    wrap.append(h("div", { class: "forge-approval-actions" }, input, h("button", {
      type: "button", class: "forge-button forge-primary", "data-testid": "question-send",
      onclick: () => send(input.value),
    }, "Send")));
    return wrap;
  }

  stepEl(p: StepFinishPart): HTMLElement {
    return h("div", { class: "forge-step", "data-testid": "step-footer" }, usage(p.tokens, p.cost, p.model));
  }

  retryEl(p: RetryPart): HTMLElement {
    return h("div", { class: "forge-retry", "data-testid": "retry" },
      h("span", { class: "forge-label" }, `Retry ${p.attempt}`),
      p.wait ? ` · waited ${seconds(p.wait)}` : "", " · ", p.error);
  }

  compactionEl(p: CompactionPart): HTMLElement {
    return h("div", { class: "forge-compaction", "data-testid": "compaction" },
      h("span", { class: "forge-label" }, p.auto ? "Context compacted automatically" : "Context compacted"),
      p.reason ? ` — ${p.reason}` : "");
  }

  patchEl(p: PatchPart): HTMLElement {
    return h("div", { class: "forge-patch", "data-testid": "patch" }, (p.files || []).map((f) => {
      const lines = (f.diff || "").split("\n");
      const pre = h("pre", { class: "forge-diff" }, lines.map((line) => {
        let cls = "";
        if (line.startsWith("+++") || line.startsWith("---")) cls = "forge-diff-meta";
        else if (line.startsWith("+")) cls = "forge-diff-add";
        else if (line.startsWith("-")) cls = "forge-diff-del";
        else if (line.startsWith("@@")) cls = "forge-diff-hunk";
        return h("span", { class: cls }, `${line}\n`);
      }));
      const head = [h("code", {}, f.path), " ",
        h("span", { class: "forge-diff-add" }, `+${f.additions || 0}`), " ",
        h("span", { class: "forge-diff-del" }, `−${f.deletions || 0}`)];
      const open = lines.length <= LONG_DIFF_LINES;
      return h("details", { class: "forge-patch-file", "data-key": `patch:${p.id}:${f.path}`, open },
        h("summary", {}, h("span", { class: "forge-label" }, "Patch"), " ", head), pre);
    }));
  }
}

const ANSWER_WORDS: Record<string, string> = { once: "Allowed once", session: "Allowed for this session", deny: "Denied" };
const WHO: Record<string, string> = { widget: "you, in the widget", panel: "you, in the side panel", user: "you", forge: "forge" };

// "Denied by you, in the widget — not now", "Denied by rule python:*=deny", "Allowed once".
function decisionText(d: Decision | { answer: string | null; reason: string | null; by?: undefined; rule?: undefined }): string {
  const said = ANSWER_WORDS[String(d.answer)] || String(d.answer);
  let who = "";
  if (d.by === "rule") who = d.rule ? `rule ${d.rule}` : "a rule";
  else if (d.by) who = WHO[d.by] || d.by;
  return `${said}${who ? ` by ${who}` : ""}${d.reason ? ` — ${d.reason}` : ""}`;
}

// A call's arguments: code (and any long text) as a code block, the rest as inline JSON.
function argRows(tool: string, input: Record<string, unknown>, id: string): HTMLElement[] {
  return Object.entries(input).map(([key, value]) => {
    if (typeof value === "string" && isBlock(value)) {
      return h("div", { class: "forge-arg forge-arg-block" }, h("span", { class: "forge-arg-key" }, key),
        codeBlock(value, codeLanguage(tool, key, input), `code:${id}:${key}`));
    }
    return h("div", { class: "forge-arg" }, h("span", { class: "forge-arg-key" }, key),
      h("code", {}, JSON.stringify(value)));
  });
}

// An ask's whole card (its code and its buttons) into view, or as much as fits.
function bringIntoView(ask: HTMLElement): void {
  if (!ask.isConnected) return;
  (ask.closest<HTMLElement>(".forge-tool") || ask).scrollIntoView({ block: "nearest" });
}

function wholeSeconds(s: number): string {
  return s < 60 ? `${Math.floor(s)} s` : seconds(s);
}

function summarizeInput(p: ToolPart): string {
  const input = p.input || {};
  for (const value of Object.values(input)) {
    if (typeof value === "string" && value.trim()) {
      const first = value.trim().split("\n")[0];
      return first.length > 80 ? `${first.slice(0, 79)}…` : first;
    }
  }
  return "";
}

function displayEl(bundle: Record<string, unknown>): HTMLElement {
  const label = (bundle["text/plain"] as string) || "";
  for (const mime of IMAGE_MIMES) {
    const data = bundle[mime];
    if (typeof data === "string") {
      return h("img", {
        class: "forge-display-image", "data-testid": "display-image", alt: label,
        src: `data:${mime};base64,${data.replace(/\s/g, "")}`,
      });
    }
  }
  const svg = bundle["image/svg+xml"];
  if (typeof svg === "string") {
    // As an <img>, an SVG cannot run scripts.
    return h("img", {
      class: "forge-display-image", "data-testid": "display-image", alt: label,
      src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`,
    });
  }
  return h("pre", { class: "forge-display-text" }, label);
}

// The pages a provider's web search cited for a text: links out (a new tab, no referrer),
// titles as text; citedSources lets through absolute http(s) URLs only.
function sourcesEl(sources: [string, string][]): HTMLElement {
  const links = sources.map(([url, title], i) => [i ? " · " : "", h("a", {
    href: url, title: url, target: "_blank", rel: "noopener noreferrer nofollow",
  }, title)]);
  return h("div", { class: "forge-sources", "data-testid": "sources" }, "Sources: ", links);
}

// The turn as the front end knows it: rebuilt from a snapshot, then advanced by batches of ops.
// Pure data, no DOM: `apply` records what changed in `dirty` for the view to redraw.

export const OUTPUT_TAIL = 64 * 1024; // characters of live tool output kept per part

export class TurnState {
  constructor() {
    this.reset();
  }

  reset() {
    this.messages = new Map(); // id -> message row
    this.parts = new Map(); // id -> part row (read-only: shared with other views, see delta)
    this.outputs = new Map(); // part id -> live output text (tail)
    this.displays = new Map(); // part id -> [mime bundle]
    // request id -> {id, part_id, tool, input, rule, answer, reason}; a question tool's card is
    // one of kind "question" ({question, options}; answer "answered" with its text, or "unanswered")
    this.approvals = new Map();
    this.decisions = new Map(); // tool part id -> {answer, by, rule, reason}: who allowed or denied it
    this.notices = [];
    this.status = { status: "busy", detail: {} };
    this.done = false;
    this.seq = 0;
    this.dirty = { all: true, parts: new Set(), messages: new Set(), header: true };
  }

  markPart(id) {
    this.dirty.parts.add(id);
  }

  apply(op) {
    switch (op.op) {
      case "message": {
        this.messages.set(op.message.id, op.message);
        this.dirty.messages.add(op.message.id);
        this.dirty.header = true;
        break;
      }
      case "part": {
        this.parts.set(op.part.id, op.part);
        this.markPart(op.part.id);
        break;
      }
      case "delta": {
        // A delta before its row can only come from a missed batch; keep the text anyway.
        const part = this.parts.get(op.id) || { id: op.id, message_id: op.message_id, type: "text", text: "" };
        // A new row, never an edit of the old one: rows come from the kernel's messages, and
        // every view of the widget (a cloned notebook view, a second output) is handed the same
        // message object, so an edit in place would add each fragment once per view.
        this.parts.set(op.id, { ...part, [op.field]: (part[op.field] || "") + op.text });
        this.markPart(op.id);
        break;
      }
      case "status": {
        this.status = { status: op.status, detail: op.detail || {} };
        this.dirty.header = true;
        break;
      }
      case "output": {
        const text = (this.outputs.get(op.id) || "") + op.text;
        this.outputs.set(op.id, text.length > OUTPUT_TAIL ? text.slice(-OUTPUT_TAIL) : text);
        this.markPart(op.id);
        break;
      }
      case "display": {
        const list = this.displays.get(op.id) || [];
        list.push(op.data);
        this.displays.set(op.id, list);
        this.markPart(op.id);
        break;
      }
      case "approval": {
        const r = op.request;
        this.approvals.set(r.id, { ...r, answer: null, reason: null });
        if (r.part_id) this.markPart(r.part_id);
        this.dirty.header = true;
        this.dirty.all = this.dirty.all || !this.parts.has(r.part_id);
        break;
      }
      case "answered": {
        const r = this.approvals.get(op.id);
        if (r !== undefined) {
          r.answer = op.answer;
          r.reason = op.reason;
          r.text = op.text === undefined ? null : op.text;
          r.by = op.by || null;
          if (r.part_id) this.markPart(r.part_id);
        }
        this.dirty.header = true;
        this.dirty.all = true;
        break;
      }
      case "decision": {
        this.decisions.set(op.id, { answer: op.answer, by: op.by, rule: op.rule, reason: op.reason });
        this.markPart(op.id);
        break;
      }
      case "notice": {
        this.notices.push({ message: op.message, level: op.level || "info" });
        this.dirty.header = true;
        break;
      }
      case "done": {
        this.done = true;
        this.dirty.header = true;
        break;
      }
      default:
        break; // an op from a newer kernel side: ignore it rather than break the view
    }
  }

  // Parts in display order: ids are time-sortable, so string order is creation order.
  orderedMessages() {
    return [...this.messages.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  partsOf(messageId) {
    const out = [];
    for (const p of this.parts.values()) if (p.message_id === messageId) out.push(p);
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  pendingApprovals() {
    return [...this.approvals.values()].filter((a) => a.answer === null);
  }

  approvalFor(partId) {
    let found = null;
    for (const a of this.approvals.values()) if (a.part_id === partId) found = a;
    return found;
  }

  get running() {
    return !this.done && this.status.status !== "idle";
  }

  get loading() {
    return !this.done && this.status.status === "loading";
  }
}

// Handles the two message kinds and the ordering between them. Returns true when the view
// should redraw, or "resync" when a batch was missed and a fresh snapshot must be asked for.
export function receive(state, msg, synced) {
  if (msg.kind === "snapshot") {
    state.reset();
    for (const op of msg.ops) state.apply(op);
    state.seq = msg.seq;
    return "synced";
  }
  if (msg.kind === "batch") {
    if (!synced) return "waiting"; // the snapshot we asked for will include this batch
    if (msg.seq <= state.seq) return "stale";
    if (msg.seq !== state.seq + 1) return "resync";
    for (const op of msg.ops) state.apply(op);
    state.seq = msg.seq;
    return "applied";
  }
  return "ignored";
}

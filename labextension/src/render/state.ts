// The turn as the front end knows it: rebuilt from a snapshot, then advanced by batches of ops.
// Pure data, no DOM: `apply` records what changed in `dirty` for the view to redraw. The ops'
// types are generated from forge_jupyter/notebook/ops.py (../protocol.generated.ts).
import type {
  AnsweredOp, ApprovalRequest, DecisionOp, Message, Op, Part, QuestionRequest, WidgetMessage
} from "../protocol.generated.js";

export const OUTPUT_TAIL = 64 * 1024; // characters of live tool output kept per part

/** An approval or a question tool's card, and how it was answered (null: not yet). A
 * question's answer is "answered" with its text, or "unanswered". */
export type Asked = (ApprovalRequest | QuestionRequest) & {
  answer: AnsweredOp["answer"] | null;
  reason: string | null;
  text?: string | null;
  by?: string | null;
};

/** Who allowed or denied a tool call. */
export type Decision = Omit<DecisionOp, "op" | "id">;

export interface Notice {
  message: string;
  level: string;
}

export interface Status {
  status: string;
  detail: Record<string, unknown>;
}

export interface Dirty {
  all: boolean;
  parts: Set<string>;
  messages: Set<string>;
  header: boolean;
}

/** What `receive` made of a message. */
export type Received = "synced" | "waiting" | "stale" | "resync" | "applied" | "ignored";

export const isQuestion = (a: Asked): a is QuestionRequest & Asked =>
  "kind" in a && a.kind === "question";

export class TurnState {
  messages!: Map<string, Message>; // id -> message row
  parts!: Map<string, Part>; // id -> part row (read-only: shared with other views, see delta)
  outputs!: Map<string, string>; // part id -> live output text (tail)
  displays!: Map<string, Record<string, unknown>[]>; // part id -> [mime bundle]
  approvals!: Map<string, Asked>; // request id -> the card
  decisions!: Map<string, Decision>; // tool part id -> who allowed or denied it
  notices!: Notice[];
  status!: Status;
  done!: boolean;
  seq!: number;
  dirty!: Dirty;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.messages = new Map();
    this.parts = new Map();
    this.outputs = new Map();
    this.displays = new Map();
    this.approvals = new Map();
    this.decisions = new Map();
    this.notices = [];
    this.status = { status: "busy", detail: {} };
    this.done = false;
    this.seq = 0;
    this.dirty = { all: true, parts: new Set(), messages: new Set(), header: true };
  }

  markPart(id: string): void {
    this.dirty.parts.add(id);
  }

  apply(op: Op): void {
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
        const part = (this.parts.get(op.id) || { id: op.id, message_id: op.message_id, type: "text", text: "" }) as
          Record<string, unknown>;
        // A new row, never an edit of the old one: rows come from the kernel's messages, and
        // every view of the widget (a cloned notebook view, a second output) is handed the same
        // message object, so an edit in place would add each fragment once per view.
        this.parts.set(op.id, { ...part, [op.field]: ((part[op.field] as string) || "") + op.text } as unknown as Part);
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
  orderedMessages(): Message[] {
    return [...this.messages.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  partsOf(messageId: string): Part[] {
    const out: Part[] = [];
    for (const p of this.parts.values()) if (p.message_id === messageId) out.push(p);
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  pendingApprovals(): Asked[] {
    return [...this.approvals.values()].filter((a) => a.answer === null);
  }

  approvalFor(partId: string): Asked | null {
    let found: Asked | null = null;
    for (const a of this.approvals.values()) if (a.part_id === partId) found = a;
    return found;
  }

  get running(): boolean {
    return !this.done && this.status.status !== "idle";
  }

  get loading(): boolean {
    return !this.done && this.status.status === "loading";
  }
}

// Handles the two message kinds and the ordering between them. Returns true when the view
// should redraw, or "resync" when a batch was missed and a fresh snapshot must be asked for.
export function receive(state: TurnState, msg: WidgetMessage, synced: boolean): Received {
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

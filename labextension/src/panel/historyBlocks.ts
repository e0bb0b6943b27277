// A stored timeline, page by page, as the blocks the history view draws: a person's prompt,
// a turn (the assistant messages that answered it, as the snapshot ops a TurnView reads — the
// same ops the kernel sends a cell widget), a compaction boundary. A turn is cut where the
// superseded mark changes, so a block is wholly in or out of the model's view.
import { IBoundary, IPart, IStoredMessage } from './api';
import type { DecisionOp, TextPart } from '../protocol.generated';
import { Op } from './protocol';

export type Block =
  | { kind: 'prompt'; message: IStoredMessage; text: string; superseded: boolean }
  | { kind: 'turn'; messages: IStoredMessage[]; ops: Op[]; superseded: boolean }
  | { kind: 'boundary'; boundary: IBoundary };

export class BlockBuilder {
  constructor(boundaries: IBoundary[]) {
    // A boundary's divider goes before the prompt that asked for the compaction (else before
    // the summary itself).
    for (const b of boundaries) {
      this.dividers.set(b.request_pos ?? b.pos, b);
    }
  }

  /** The blocks complete with these messages (the last turn stays open for the next page). */
  add(messages: IStoredMessage[]): Block[] {
    const out: Block[] = [];
    for (const m of messages) {
      const divider = this.dividers.get(m.pos);
      if (divider) {
        this.dividers.delete(m.pos);
        this.flush(out);
        out.push({ kind: 'boundary', boundary: divider });
      }
      const text = promptText(m);
      if (text !== null) {
        this.flush(out);
        out.push({ kind: 'prompt', message: m, text, superseded: m.superseded });
        continue;
      }
      if (this.open.length && this.open[0].superseded !== m.superseded) {
        this.flush(out);
      }
      this.open.push(m);
    }
    return out;
  }

  /** What is left at the end of the timeline. */
  finish(): Block[] {
    const out: Block[] = [];
    this.flush(out);
    return out;
  }

  private flush(out: Block[]): void {
    if (this.open.length) {
      out.push({ kind: 'turn', messages: this.open, ops: turnOps(this.open), superseded: this.open[0].superseded });
      this.open = [];
    }
  }

  private open: IStoredMessage[] = [];
  private readonly dividers = new Map<number, IBoundary>();
}

/** A person's prompt: a user message with text and no compaction request; null otherwise. */
export function promptText(m: IStoredMessage): string | null {
  if (m.role !== 'user' || m.parts.some(p => p.type === 'compaction')) {
    return null;
  }
  const texts = m.parts.filter((p): p is TextPart => p.type === 'text' && !p.synthetic).map(p => String(p.text ?? ''));
  return texts.length ? texts.join('\n\n') : null;
}

/** The snapshot a TurnView rebuilds a finished turn from, as turn_state.snapshot_ops sends it. */
export function turnOps(messages: IStoredMessage[]): Op[] {
  const ops: Op[] = [{ op: 'status', status: 'idle', detail: {} }];
  const parts: IPart[] = [];
  for (const m of messages) {
    const { parts: own, ...row } = m; // (its timeline marks ride along; the view ignores them)
    ops.push({ op: 'message', message: row });
    parts.push(...own);
  }
  for (const p of parts) {
    ops.push({ op: 'part', part: p });
  }
  for (const p of parts) {
    // Who allowed or denied a call is kept on the part (metadata.decision).
    const meta = p.metadata as { decision?: Partial<DecisionOp> } | undefined;
    if (meta && meta.decision && typeof meta.decision === 'object') {
      const d = meta.decision;
      ops.push({ op: 'decision', id: p.id, answer: d.answer as string | null, by: d.by as string | null, rule: d.rule, reason: d.reason as string | null });
    }
  }
  ops.push({ op: 'done' });
  return ops;
}

// The host a TurnView (../render/view.ts) talks to, for a turn shown in the panel. In a cell
// the host is the anywidget model; here it is this adapter, which offers the two calls the
// view makes — get(key) and send(msg) — and turns what the view sends into the comm's
// messages (docs/api.md): approve and answer as they are, stop naming the turn, hello for a
// fresh snapshot. The messages' types are generated from forge_jupyter/notebook/ops.py.
import type { PanelCommand, ViewMessage } from '../protocol.generated';
import type { Host } from '../render/view.js';

export interface ISender {
  send(data: PanelCommand): void;
  hello(): void;
}

/** A static host: the view of a stored turn sends nothing anywhere. */
export const NO_HOST: Host = {
  get: (_key: string): unknown => undefined,
  send: (_msg: unknown): void => undefined
};

export class CommModel implements Host {
  constructor(private readonly link: ISender, readonly turnId: string, public sessionId: string) {}

  /** The widget's synced traits; the panel's turns carry their state in the snapshot ops. */
  get(_key: string): unknown {
    return undefined;
  }

  send(msg: ViewMessage): void {
    switch (msg.type) {
      case 'approve':
        this.link.send({
          type: 'approve', request_id: msg.request_id, answer: msg.answer, reason: msg.reason ?? null
        });
        break;
      case 'answer':
        this.link.send({ type: 'answer', request_id: msg.request_id, text: msg.text });
        break;
      case 'stop':
        this.link.send({ type: 'stop', session_id: this.sessionId, turn_id: this.turnId });
        break;
      case 'hello':
        this.link.hello();
        break;
      default:
        break; // nothing else travels from a view to the kernel
    }
  }
}

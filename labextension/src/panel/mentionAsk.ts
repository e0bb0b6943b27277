// The box asks the notebook's kernel what follows an `@` (the comm's `complete`); no answer
// within a moment, or no forge in the kernel, is an empty offer: typing goes on.
import type { Completion, PanelMessage } from '../protocol.generated';
import { KernelLink } from './kernelLink';

const WAIT_MS = 1500;
let asked = 0;

export function completeMention(link: KernelLink, query: string): Promise<Completion[]> {
  if (!link.attached) {
    return Promise.resolve([]);
  }
  const request_id = `complete_${Date.now().toString(36)}_${++asked}`;
  return new Promise(resolve => {
    const done = (items: Completion[]): void => {
      clearTimeout(timer);
      link.received.disconnect(onMsg);
      resolve(items);
    };
    const onMsg = (_: KernelLink, msg: PanelMessage): void => {
      if (msg.kind === 'completions' && msg.request_id === request_id) {
        done(msg.items);
      }
    };
    const timer = setTimeout(() => done([]), WAIT_MS);
    link.received.connect(onMsg);
    link.send({ type: 'complete', request_id, query });
  });
}

// The prompt box's way into the notebook's kernel: an execute_request of a `%%forge --panel`
// cell, after `%load_ext forge_jupyter` (silent) when the kernel has not loaded forge yet. It
// queues behind a running cell like any cell; until the kernel starts it, the box says so.
import { KernelMessage } from '@jupyterlab/services';

import { KernelLink } from './kernelLink';
import { LOAD_CODE } from './protocol';
import type { PanelImage } from '../protocol.generated';

export interface IRunHooks {
  /** What the box says under the prompt ("" to clear). */
  status(text: string, level?: 'info' | 'warning' | 'error'): void;
  /** Text the kernel printed for this request (a usage error, text mode). */
  output(text: string): void;
}

const ATTACH_MS = 15000; // after %load_ext, how long the comm may take to say hello
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export const QUEUED = 'queued: the kernel is busy';

/** Runs `code` (a %%forge --panel cell) in the link's kernel; resolves when it has run. */
export async function runPrompt(link: KernelLink, code: string, ahead: PanelImage[], hooks: IRunHooks): Promise<void> {
  const kernel = link.kernel;
  if (!kernel) {
    throw new Error('This notebook has no kernel: start one (Kernel → Restart Kernel…) and send again.');
  }
  if (!link.attached && (link.state === 'unknown' || link.state === 'connecting')) {
    await link.connect(3000);
  }
  if (!link.attached) {
    // Sent now, it waits its turn in the kernel like a cell; the box says so while it waits.
    const loaded = await execute(link, LOAD_CODE, true, hooks);
    if (loaded.status !== 'ok') {
      const err = loaded as KernelMessage.IReplyErrorContent;
      throw new Error(`forge_jupyter could not be loaded in this kernel (${err.ename}: ${err.evalue}). ` +
        "Install forge-jupyter in the kernel's environment, then send again.");
    }
    if (!(await link.whenAttached(ATTACH_MS))) {
      hooks.status('The kernel loaded forge but its side-panel channel did not answer; ' +
        'this run shows as text below.', 'warning');
    }
  }
  if (ahead.length && !link.attached) {
    throw new Error('The pasted images could not reach the kernel (its side-panel channel did not ' +
      'answer); reload the page and send again.');
  }
  for (const image of ahead) {
    link.send(image); // on the kernel's shell channel, so before the cell that names it
  }
  const reply = await execute(link, code, false, hooks);
  if (reply.status === 'aborted') {
    hooks.status('The kernel aborted this prompt (a cell before it failed); send it again.', 'warning');
  }
}

function execute(link: KernelLink, code: string, silent: boolean, hooks: IRunHooks
): Promise<KernelMessage.IExecuteReplyMsg['content']> {
  const kernel = link.kernel!;
  let started = false;
  if (kernel.status !== 'idle') {
    hooks.status(QUEUED);
  }
  const future = kernel.requestExecute({
    code, silent, store_history: false, allow_stdin: false, stop_on_error: false
  });
  future.onIOPub = (msg: KernelMessage.IIOPubMessage) => {
    const type = msg.header.msg_type;
    if (!started && (type === 'execute_input' || (type === 'status' &&
        (msg.content as KernelMessage.IStatusMsg['content']).execution_state === 'busy'))) {
      started = true;
      hooks.status('');
    }
    if (type === 'stream') {
      hooks.output((msg.content as KernelMessage.IStreamMsg['content']).text.replace(ANSI, ''));
    } else if (type === 'error') {
      const err = msg.content as KernelMessage.IErrorMsg['content'];
      hooks.output(`${err.ename}: ${err.evalue}`.replace(ANSI, '') + '\n');
    }
  };
  return future.done.then(reply => reply.content);
}

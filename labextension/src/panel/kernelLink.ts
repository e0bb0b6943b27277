// One notebook's kernel as the panel sees it: the comm `forge.panel` to it (opened by the
// kernel at `%load_ext forge_jupyter`, or by the panel when forge was loaded before the page),
// kept across kernel restarts and kernel changes, and what arrives on it.
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel, KernelAPI, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import type { PanelCommand } from '../protocol.generated';
import { IInfo, KernelMessage as ForgeMessage, parse, TARGET } from './protocol';

/** Where the link stands, for the panel's header. */
export type LinkState =
  | 'no-kernel' // the notebook has no kernel (yet)
  | 'unknown' // a kernel, and the panel has not asked it about forge yet
  | 'connecting' // a comm is opening
  | 'not-loaded' // the kernel has no forge.panel target: forge is not loaded there
  | 'attached'; // a comm that said hello: info, turns and batches arrive

const HELLO_EVERY_MS = 1000; // a view that missed a batch asks again at most this often
const BUSY_POLL_MS = 2000; // while connecting, how often the server is asked if the kernel is busy
const KEPT_MAX = 1000; // messages kept for the kernel while it has no forge (sendWhenAttached)

export class KernelLink {
  readonly received = new Signal<this, ForgeMessage>(this);
  readonly stateChanged = new Signal<this, LinkState>(this);
  /** The kernel went busy or idle (a comm opened to a busy kernel waits until it is idle). */
  readonly busyChanged = new Signal<this, boolean>(this);
  /** The kernel went away with its turns (restart, shutdown, another kernel chosen). */
  readonly lost = new Signal<this, string>(this);
  info: IInfo | null = null;

  constructor(readonly context: ISessionContext) {
    context.kernelChanged.connect(this._onKernelChanged, this);
    this._watch(context.session?.kernel ?? null);
  }

  get kernel(): Kernel.IKernelConnection | null {
    return this._kernel;
  }

  get state(): LinkState {
    return this._state;
  }

  /** The kernel is running a cell (or starting): what the kernel is asked now waits. */
  get busy(): boolean {
    const status = this._kernel?.status;
    // A page opened on a kernel already running a cell sees no status until the cell ends:
    // the server's record of the kernel says (pollBusy).
    return status === 'busy' || (status === 'unknown' && this._serverBusy);
  }

  get attached(): boolean {
    return this._state === 'attached';
  }

  dispose(): void {
    this.context.kernelChanged.disconnect(this._onKernelChanged, this);
    this._watch(null);
    Signal.clearData(this);
  }

  /** Open a comm to the kernel's target (forge already loaded there); true once attached. */
  async connect(timeoutMs = 5000): Promise<boolean> {
    const kernel = this._kernel;
    if (!kernel || this._state === 'attached') {
      return this._state === 'attached';
    }
    if (this._state !== 'connecting') {
      this._setState('connecting');
      void this._pollBusy(kernel);
      try {
        const comm = kernel.createComm(TARGET);
        this._adopt(comm);
        await commReady(comm, kernel);
        // The kernel closes a comm to a target it does not have: forge is not loaded.
        comm.open({ type: 'hello' });
      } catch (err) {
        console.warn('forge panel: could not open a comm to the kernel', err);
        this._setState('unknown');
        return false;
      }
    }
    return this.whenAttached(timeoutMs);
  }

  /** Resolves true when attached (info received), false after `timeoutMs` or a refusal. */
  whenAttached(timeoutMs: number): Promise<boolean> {
    if (this._state === 'attached') {
      return Promise.resolve(true);
    }
    return new Promise(resolve => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.stateChanged.disconnect(onState);
        resolve(ok);
      };
      const onState = (_: this, s: LinkState): void => {
        if (s === 'attached') {
          done(true);
        } else if (s === 'not-loaded' || s === 'no-kernel') {
          done(false);
        }
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.stateChanged.connect(onState);
    });
  }

  /** The panel was shown: from now on a comm the kernel opens is answered with hello (the
   * kernel counts a panel as attached — able to answer approvals — only after a hello). */
  enable(): void {
    if (this._enabled) {
      return;
    }
    this._enabled = true;
    if (this._helloDue && this._comm && !this._comm.isDisposed) {
      this._helloDue = false;
      this._comm.send({ type: 'hello' });
    }
  }

  send(data: PanelCommand): void {
    const comm = this._comm;
    if (!comm || comm.isDisposed) {
      return;
    }
    try {
      comm.send(data as never);
    } catch (err) {
      console.warn('forge panel: message not sent', err);
    }
  }

  /** Send `data` now if attached; else keep it and send it once attached again (forge loaded
   * in the kernel, after a restart too): a review decided meanwhile is still recorded. */
  sendWhenAttached(data: PanelCommand): void {
    if (this.attached && this._comm && !this._comm.isDisposed) {
      this.send(data);
    } else if (this._kept.length < KEPT_MAX) {
      this._kept.push(data);
    }
  }

  /** Ask again for info and a snapshot of each running turn (throttled). */
  hello(): void {
    const now = Date.now();
    if (now - this._lastHello >= HELLO_EVERY_MS) {
      this._lastHello = now;
      this.send({ type: 'hello' });
    }
  }

  // -- the kernel ---------------------------------------------------------------------------

  private _onKernelChanged(_: ISessionContext, change: { newValue: Kernel.IKernelConnection | null }): void {
    this._watch(change.newValue);
  }

  private _watch(kernel: Kernel.IKernelConnection | null): void {
    const old = this._kernel;
    if (old === kernel) {
      return;
    }
    if (old && !old.isDisposed) {
      old.statusChanged.disconnect(this._onStatus, this);
      old.removeCommTarget(TARGET, this._onOpen);
    }
    this._dropComm(old ? 'The notebook changed kernels: runs of the previous one are not followed any more.' : '');
    this._kernel = kernel;
    if (kernel) {
      // The kernel opens a comm to this target at `%load_ext forge_jupyter`.
      kernel.registerCommTarget(TARGET, this._onOpen);
      kernel.statusChanged.connect(this._onStatus, this);
    }
    this._setState(kernel ? 'unknown' : 'no-kernel');
  }

  /** While a comm is opening, ask the server whether the kernel is busy (its execution
   * state), until the comm is open or the kernel changes. */
  private async _pollBusy(kernel: Kernel.IKernelConnection): Promise<void> {
    while (this._kernel === kernel && this._state === 'connecting' && !kernel.isDisposed) {
      try {
        const model = await KernelAPI.getKernelModel(kernel.id, kernel.serverSettings);
        this._serverBusy = model?.execution_state === 'busy';
      } catch {
        this._serverBusy = false; // the server did not say: the header says connecting
      }
      this._busyMaybeChanged();
      await new Promise(resolve => setTimeout(resolve, BUSY_POLL_MS));
    }
    this._serverBusy = false;
    this._busyMaybeChanged();
  }

  private _busyMaybeChanged(): void {
    if (this.busy !== this._wasBusy) {
      this._wasBusy = this.busy;
      this.busyChanged.emit(this._wasBusy);
    }
  }

  private _onStatus(kernel: Kernel.IKernelConnection, status: KernelMessage.Status): void {
    this._busyMaybeChanged();
    if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
      // Comms do not survive a restart; the new process has not loaded forge.
      this._dropComm(status === 'dead' ? 'The kernel died: its runs ended with it.'
        : 'The kernel restarted: its runs ended with it.');
      this._setState(status === 'dead' ? 'no-kernel' : 'not-loaded');
    }
  }

  private _onOpen = (comm: Kernel.IComm): void => {
    // Not awaited: a promise returned here would hold up the kernel's other messages.
    void this._attachOpened(comm);
  };

  private async _attachOpened(comm: Kernel.IComm): Promise<void> {
    const kernel = this._kernel;
    if (!kernel) {
      return;
    }
    if (this._comm && !this._comm.isDisposed && this._comm !== comm) {
      // A second %load_ext (after %unload_ext): the newest comm is the kernel's live one.
      const old = this._comm;
      this._comm = null;
      old.onClose = () => undefined;
      try {
        old.close();
      } catch {
        // already gone
      }
    }
    this._adopt(comm);
    this._setState('connecting');
    await commReady(comm, kernel);
    if (this._comm !== comm || comm.isDisposed) {
      return;
    }
    if (this._enabled) {
      comm.send({ type: 'hello' });
    } else {
      this._helloDue = true; // kept, unattached, until the panel is first shown
    }
  }

  private _adopt(comm: Kernel.IComm): void {
    this._comm = comm;
    comm.onMsg = msg => {
      const parsed = parse(msg.content.data);
      if (!parsed) {
        return;
      }
      if (parsed.kind === 'info') {
        this.info = parsed;
        if (this._state !== 'attached') {
          this._setState('attached');
          const kept = this._kept;
          this._kept = [];
          kept.forEach(k => this.send(k));
        }
      }
      this.received.emit(parsed);
    };
    comm.onClose = () => {
      if (this._comm !== comm) {
        return;
      }
      this._comm = null;
      const was = this._state;
      this.info = null;
      this._setState(this._kernel ? 'not-loaded' : 'no-kernel');
      if (was === 'attached') {
        this.lost.emit('forge was unloaded from the kernel: its runs are not followed any more.');
      }
    };
  }

  private _dropComm(why: string): void {
    const comm = this._comm;
    this._comm = null;
    this._helloDue = false;
    const was = this._state;
    this.info = null;
    if (comm && !comm.isDisposed) {
      comm.onClose = () => undefined;
      try {
        comm.close();
      } catch {
        // the kernel is gone; nothing to tell it
      }
    }
    if (why && (was === 'attached' || was === 'connecting')) {
      this.lost.emit(why);
    }
  }

  private _setState(state: LinkState): void {
    if (state !== this._state) {
      this._state = state;
      this.stateChanged.emit(state);
    }
  }

  private _kernel: Kernel.IKernelConnection | null = null;
  private _comm: Kernel.IComm | null = null;
  private _state: LinkState = 'no-kernel';
  private _lastHello = 0;
  private _enabled = false;
  private _helloDue = false;
  private _wasBusy = false;
  private _serverBusy = false;
  private _kept: PanelCommand[] = [];
}

/** Until the comm's messages go over its subshell (ipykernel 7: the kernel reads them while a
 * cell runs); at once on a kernel without subshells. */
async function commReady(comm: Kernel.IComm, kernel: Kernel.IKernelConnection): Promise<void> {
  try {
    await kernel.info;
    const started = (comm as unknown as { subshellStarted?: Promise<void> }).subshellStarted;
    if (kernel.supportsSubshells && started) {
      await started;
    }
  } catch (err) {
    console.warn('forge panel: no subshell for the comm; using the main shell', err);
  }
}

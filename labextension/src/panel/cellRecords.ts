// A %%forge cell whose turn ended while no page showed its notebook (closed, reloaded mid-run)
// never received its record: the kernel sent it to a front end that was gone. When the chat
// reads the session, each such cell gets the record back from the store (GET …/record) — a
// cell of this notebook (by its cell id) that shows nothing, whose turn was prompted after
// the file was last saved, and is done. A cell a person cleared after that save is left alone
// (its prompt is older than the save), and so is one whose text is no longer a %%forge cell.
import { NotebookPanel } from '@jupyterlab/notebook';

import { ForgeApi, IStoredMessage } from './api';

export class CellRecords {
  constructor(private readonly api: ForgeApi, private readonly notebook: NotebookPanel) {}

  /** Put back the records of cells that missed theirs, among these stored messages. */
  async restore(sessionId: string, messages: IStoredMessage[]): Promise<void> {
    const saved = Date.parse(this.notebook.context.contentsModel?.last_modified ?? '') / 1000;
    const latest = new Map<string, IStoredMessage>(); // cell id → its newest prompt
    for (const m of messages) {
      const cell = m.role === 'user' ? m.origin?.cell_id : null;
      if (typeof cell === 'string' && cell) {
        latest.set(cell, m);
      }
    }
    for (const [cellId, prompt] of latest) {
      const cell = this.notebook.content.widgets.find(c => c.model.id === cellId);
      // Only a cell that still holds a %%forge prompt: one a person rewrote since keeps its own
      // (empty) outputs rather than another turn's record.
      if (!cell || cell.model.type !== 'code' || this.done.has(prompt.id) ||
          !/^%%forge(\s|$)/.test(cell.model.sharedModel.getSource())) {
        continue;
      }
      const model = cell.model as unknown as { outputs: { length: number; add(o: unknown): void } };
      const prompted = Number(prompt.created_at ?? 0);
      if (model.outputs.length > 0 || !(prompted > saved)) {
        continue;
      }
      try {
        const record = await this.api.record(sessionId, prompt.pos);
        if (!record.done || !Object.keys(record.data).length || model.outputs.length > 0) {
          continue; // still running (its live turn is in the chat), or shown meanwhile
        }
        this.done.add(prompt.id);
        model.outputs.add({ output_type: 'display_data', data: record.data, metadata: {} });
      } catch (err) {
        console.warn('forge panel: a cell record could not be read', err);
      }
    }
  }

  private readonly done = new Set<string>();
}

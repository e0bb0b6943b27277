// The comm `forge.panel` as the panel speaks it (docs/api.md, "Kernel comm forge.panel"), and
// the code of the execute_request its prompt box sends. Everything the kernel sends is checked
// for shape before use: a kernel runs whatever its notebook ran, so its messages are data.
// The messages' types are generated from forge_jupyter/notebook/ops.py.
import type {
  EditCell, Info, Op, PanelMessage, PanelNotice, RevertStep, Turn, TurnBatch, TurnEnd
} from '../protocol.generated';

export type { Op };

export const TARGET = 'forge.panel';

/** A model or agent name the panel puts on the magic's line; anything else is refused. */
export const NAME = /^[A-Za-z0-9._:/@-]+$/;

export const LOAD_CODE = '%load_ext forge_jupyter';

export type IInfo = Info;
export type ITurn = Turn;
export type IBatch = TurnBatch;
export type ITurnEnd = TurnEnd;
export type INotice = PanelNotice;
export type KernelMessage = PanelMessage;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const names = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && NAME.test(x)) : [];
// Ops are passed on with their op named; their fields are the kernel's (a view ignores an op
// it does not know).
const ops = (v: unknown): Op[] =>
  Array.isArray(v) ? v.filter((o): o is Op => !!o && typeof o === 'object' && typeof o.op === 'string') : [];
const seq = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The kernel's message in the panel's types, or null for one it does not understand. */
export function parse(data: unknown): KernelMessage | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const d = data as Record<string, unknown>;
  switch (d.kind) {
    case 'info':
      return {
        kind: 'info', protocol: seq(d.protocol), tenant: str(d.tenant), model: NAME.test(str(d.model)) ? str(d.model) : '',
        agent: NAME.test(str(d.agent)) ? str(d.agent) : '', models: names(d.models),
        agents: names(d.agents), session_id: str(d.session_id), notebook: str(d.notebook),
        live: Array.isArray(d.live) ? d.live.filter((x): x is string => typeof x === 'string') : []
      };
    case 'turn':
      return {
        kind: 'turn', turn_id: str(d.turn_id), session_id: str(d.session_id),
        origin: str(d.origin) || 'cell', prompt: str(d.prompt), seq: seq(d.seq), ops: ops(d.ops)
      };
    case 'batch':
      return { kind: 'batch', turn_id: str(d.turn_id), session_id: str(d.session_id), seq: seq(d.seq), ops: ops(d.ops) };
    case 'turn-end':
      return { kind: 'turn-end', turn_id: str(d.turn_id), session_id: str(d.session_id) };
    case 'notice':
      return { kind: 'notice', message: str(d.message), level: str(d.level) || 'info' };
    case 'read-cells':
      return {
        kind: 'read-cells', request_id: str(d.request_id), max_chars: seq(d.max_chars),
        image_ids: Array.isArray(d.image_ids) ? d.image_ids.filter((x): x is string => typeof x === 'string') : [],
        image_chars: seq(d.image_chars)
      };
    case 'completions':
      return {
        kind: 'completions', request_id: str(d.request_id), query: str(d.query),
        items: Array.isArray(d.items) ? d.items.filter(i => i && typeof i === 'object' &&
          typeof i.insert === 'string' && typeof i.detail === 'string').slice(0, 100)
          .map(i => ({ insert: String(i.insert).slice(0, 5000), detail: String(i.detail).slice(0, 200) })) : []
      };
    case 'edit-cell': {
      const edit = ['insert', 'edit', 'delete', 'move'].includes(str(d.edit)) ? str(d.edit) : '';
      const place = ['before', 'after', 'start', 'end'].includes(str(d.place)) ? str(d.place) : 'end';
      if (!edit || !str(d.request_id)) {
        return null;
      }
      return {
        kind: 'edit-cell', request_id: str(d.request_id), edit: edit as EditCell['edit'],
        change_id: str(d.change_id), session_id: str(d.session_id), cell_id: str(d.cell_id),
        anchor_id: str(d.anchor_id), place: place as EditCell['place'], cell_type: str(d.cell_type),
        source: str(d.source), auto_accept: d.auto_accept === true
      };
    }
    case 'cell-outputs':
      return {
        kind: 'cell-outputs', cell_id: str(d.cell_id), running: d.running === true,
        // nbformat outputs from the kernel: JupyterLab's output model validates each one
        outputs: Array.isArray(d.outputs) ? d.outputs.filter(o => o && typeof o === 'object' && !Array.isArray(o)) : []
      };
    case 'revert-cells': {
      if (!str(d.request_id) || !Array.isArray(d.steps)) {
        return null;
      }
      return { kind: 'revert-cells', request_id: str(d.request_id), steps: d.steps.filter(isStep) };
    }
    default:
      return null;
  }
}

const EDITS = ['insert', 'edit', 'delete', 'move'];
const strOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

function isStep(v: unknown): v is RevertStep {
  if (!v || typeof v !== 'object') {
    return false;
  }
  const s = v as Record<string, unknown>;
  return typeof s.change_id === 'string' && EDITS.includes(str(s.edit)) && typeof s.cell_id === 'string' &&
    strOrNull(s.after) && strOrNull(s.before) && typeof s.index === 'number' && typeof s.from_index === 'number' &&
    typeof s.previous === 'string' && (s.cell === null || (!!s.cell && typeof s.cell === 'object'));
}

/** The cell the prompt box runs: `%%forge --panel [-m MODEL] [-a AGENT]` then the prompt.
 * Throws with a message for the person when a name is not one the panel may send. */
export function forgeCode(prompt: string, model: string, agent: string, imageIds: string[] = []): string {
  let line = '%%forge --panel';
  for (const id of imageIds) {
    if (!/^paste_[a-z0-9]{8,40}$/.test(id)) {
      throw new Error('A pasted image has an id the panel does not send; paste it again.');
    }
    line += ` --image ${id}`;
  }
  for (const [flag, value, what] of [['-m', model, 'model'], ['-a', agent, 'agent']]) {
    if (!value) {
      continue;
    }
    if (!NAME.test(value)) {
      throw new Error(`The ${what} name ${JSON.stringify(value.slice(0, 60))} is not one the panel sends ` +
        '(letters, digits and . _ : / @ - only); pick another.');
    }
    line += ` ${flag} ${value}`;
  }
  return `${line}\n${prompt}`;
}

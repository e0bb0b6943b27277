// The server extension's REST API (docs/api.md): GET only, JSON, through
// ServerConnection.makeRequest, which carries Jupyter's token and XSRF cookie. The tenant and
// the store are the server's; nothing here names them.
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { Message, Part } from '../protocol.generated';

export interface ISession {
  id: string;
  name: string | null;
  title: string | null;
  notebook: string | null;
  agent: string | null;
  model: string | null; // the session's own setting; null: the default model
  models: string[]; // the models its answers came from, first used first
  created: number | null;
  updated: number | null;
  messages: number;
  cost: number | null;
  tokens: { input: number; output: number };
  parent_id: string | null;
  relation: 'fork' | 'subtask' | null;
  forked_from_message_id: string | null;
  children: number;
}

export interface ISessionPage {
  sessions: ISession[];
  next_cursor: string | null;
}

/** A part row as the store keeps it (server/shapes.py sends `Part.to_json()`). */
export type IPart = Part;

/** A message of the timeline: its row, its parts and its place (server/shapes.message_json). */
export interface IStoredMessage extends Message {
  parts: IPart[];
  pos: number;
  superseded: boolean;
  boundary: boolean;
  replayed: string | null; // "↻ replayed · recorded … with <model>", for a replayed message
}

export interface IBoundary {
  pos: number;
  message_id: string;
  request_pos: number | null;
  created: number | null;
  auto: boolean | null;
  reason: string | null;
  tokens_before: number | null;
  tokens_after: number | null;
}

export interface IMessagePage {
  messages: IStoredMessage[];
  boundaries: IBoundary[];
  next_cursor: string | null;
}

/** A turn's cell record as the kernel leaves it in its %%forge cell (server/reader.record). */
export interface IRecord {
  prompt: { notebook?: string | null; cell_id?: string | null; execution_count?: number | null } | null;
  done: boolean;
  data: Record<string, string>;
}

export interface ITotals {
  cost: number | null;
  input_tokens: number;
  output_tokens: number;
  turns: number;
  unpriced_steps?: number;
}

export interface ICosts {
  session: ITotals | null;
  notebook: ITotals | null;
  today: ITotals;
}

/** The model a session is shown with: its own setting, else the last that answered it. */
export function modelOf(s: ISession): string | null {
  return s.model || (s.models && s.models.length ? s.models[s.models.length - 1] : null);
}

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export class ForgeApi {
  constructor(private readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  sessions(q: string, cursor: string | null, limit = 30, notebook = ''): Promise<ISessionPage> {
    return this.get('sessions', { q, cursor, limit, notebook });
  }

  /** The newest session a notebook created (its path as JupyterLab names it), or null. */
  async notebookSession(path: string): Promise<ISession | null> {
    const page = await this.sessions('', null, 1, path);
    return page.sessions[0] ?? null;
  }

  messages(id: string, cursor: string | null, limit = 200): Promise<IMessagePage> {
    return this.get(`sessions/${encodeURIComponent(id)}/messages`, { cursor, limit });
  }

  session(id: string): Promise<{ session: ISession; totals: ITotals }> {
    return this.get(`sessions/${encodeURIComponent(id)}`, {});
  }

  /** The cell record of the turn whose prompt is at `pos` (GET …/record). */
  record(id: string, pos: number): Promise<IRecord> {
    return this.get(`sessions/${encodeURIComponent(id)}/record`, { pos });
  }

  costs(session: string, notebook: string): Promise<ICosts> {
    let tz = 'UTC';
    try {
      tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    } catch {
      // an engine without time zone data: today is UTC's
    }
    return this.get('costs', { session, notebook, tz });
  }

  private async get<T>(path: string, query: Record<string, string | number | null>): Promise<T> {
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(query)) {
      if (v !== null && v !== '') {
        params[k] = String(v);
      }
    }
    const url = URLExt.join(this.settings.baseUrl, 'forge/api', path) + URLExt.objectToQueryString(params);
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(url, { method: 'GET' }, this.settings);
    } catch (err) {
      throw new ApiError(0, `The Jupyter server did not answer (${String(err)}); check that it is running.`);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new ApiError(response.status, explain(response.status, text));
    }
    return JSON.parse(text) as T;
  }
}

function explain(status: number, body: string): string {
  let said = '';
  try {
    said = String(JSON.parse(body).message || '');
  } catch {
    // not JSON: a proxy's page, say only the status
  }
  if (status === 404 && !said) {
    return 'The forge server extension is not enabled in this Jupyter server (no /forge/api/): ' +
      'run `jupyter server extension enable forge_jupyter` and restart it.';
  }
  if (status === 403) {
    return `The server refused the request (403${said ? `: ${said}` : ''}); reload the page to log in again.`;
  }
  return said || `The server answered ${status}.`;
}

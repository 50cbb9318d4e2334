/**
 * The one module that talks to the server: it builds every /hipo/api/ URL and types every reply.
 *
 * The shapes mirror hipo_jupyter/server/views.py and handlers.py. Every call names the notebook
 * by its path relative to the server root; the server answers for the memory in its folder.
 * Every call reads (GET) but the user's writes (POST, with Jupyter's XSRF): `acceptRule`,
 * `forgetCheckpoint` and `correctCheckpoint`.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export const API_NAMESPACE = 'hipo/api';

export interface INodeRef {
  period: string;
  level: 'daily' | 'weekly' | 'monthly';
  file: string | null; // null while compaction has not built the node yet
  status: string | null;
}

export interface ITopicPeriod extends INodeRef {
  children: INodeRef[];
}

export interface ITopic {
  name: string;
  type: string;
  age_days: number;
  keywords: string[];
  months: string[];
  weeks: string[];
  last_date: string;
  count: number;
  periods: ITopicPeriod[];
}

export interface INodeStatus {
  file: string;
  level: string;
  period: string;
  status: string;
}

export interface ITree {
  root: string;
  /** the memory folder's own name, for the header (the server root's name at the top) */
  folder?: string;
  has_memory: boolean;
  sections: { title: string; text: string }[];
  topics: ITopic[];
  nodes: INodeStatus[];
  /** summaries the model still owes: nodes standing in with the extractive one (newer servers) */
  owed_summaries?: number;
}

export interface INode {
  file: string;
  content: string;
}

export interface IHit {
  file: string;
  line: number;
  date: string;
  kind: string;
  type: string;
  title: string;
  snippet: string;
  score: number;
  path: string[];
  topics: string[];
  /** raw hits: where the checkpoint came from (notebook, cell, front end, model); "" if unknown */
  provenance?: string;
}

export interface IRecallResult {
  query: string;
  hits: IHit[];
  did_you_mean: string[];
  topic_matches: string[];
  /** keyword, or hybrid / semantic when the server has the semantic extra */
  mode?: string;
}

export interface IBudgetPart {
  name: string;
  path: string;
  tokens: number;
  budget: number;
  fill: number | null;
  truncated: boolean;
  exists: boolean;
}

export interface IBudget {
  parts: IBudgetPart[];
  total_tokens: number;
  total_budget: number;
  over_budget: boolean;
}

export interface ICheckpoint {
  title: string;
  type: string;
  id: string | null;
  tags: string[];
  date: string | null;
  line: number;
  notebook: string | null;
  cell?: string | null;
  via?: string | null; // the front end that wrote it: magic, cli, import, write-back, mcp
  model?: string | null; // the Claude model of the request a write-back came from
  /** the same phrase recall hits carry: "analysis.ipynb cell 7 via magic, model ..." or "" */
  provenance?: string;
  fields: [string, string][];
  text: string;
}

export interface IRecent {
  checkpoints: ICheckpoint[];
}

export interface IChanges {
  /** moves whenever anything the sidebar shows may have changed, written by any process */
  stamp: string;
}

export interface ISentPart {
  kind: 'layer1' | 'recalled';
  name: string;
  source: string;
  tokens: number;
  provenance: string;
}

/** What the notebook's last %%ask sent: each Layer 1 part and recalled piece. */
export interface ISent {
  notebook: string;
  at: string;
  model: string;
  tokens: number;
  parts: ISentPart[];
}

/** A feedback rule with a trigger: in force (the user's) or proposed (an agent's, a
 * write-back's, an import's) until the user accepts it. */
export interface IRule {
  trigger: string;
  rule: string;
  file: string;
  line: number;
  date: string;
  id: string | null;
  title: string;
  superseded_by: string | null;
  writer: string; // user | claude | agent | import | teammate
  provenance: string; // who proposed it, as recall says where a checkpoint came from
  accepts: string | null;
  in_force: boolean;
  active: boolean;
}

export interface IRules {
  rules: IRule[]; // in force, active first
  proposals: IRule[]; // waiting for the user, newest first
}

export interface IAccepted {
  accepted: string; // the proposal's id
  checkpoint: ICheckpoint; // the user's checkpoint that now holds the rule
}

/** A checkpoint to forget or correct: by its id (a recent checkpoint) or, for a recall hit,
 * by where its heading is. */
export type CheckpointRef = { id: string } | { file: string; line: number };

export interface IForgotten {
  forgot: string; // the checkpoint's id
  tombstone: string; // the one line its raw log keeps
  clean: boolean; // no file of the memory holds its text
  remaining: string[];
  user_files: string[]; // the user's own files (a notebook) that still hold it
}

export interface ICorrected {
  replaces: string | null; // the id of the checkpoint it supersedes
  checkpoint: ICheckpoint;
}

export interface IRecallOptions {
  k?: number;
  since?: string;
  until?: string;
  type?: string;
}

/** A non-2xx reply, with the server's JSON message (e.g. "No memory yet ... %load_ext hipo"). */
export class HipoRequestError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message);
    this.name = 'HipoRequestError';
  }
}

/** The URL of an endpoint with its query string; empty values are left out. */
export function apiUrl(
  baseUrl: string,
  endpoint: string,
  params: Record<string, string | number | undefined>
): string {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') {
      query[key] = String(value);
    }
  }
  return (
    URLExt.join(baseUrl, API_NAMESPACE, endpoint) + URLExt.objectToQueryString(query)
  );
}

async function getJson<T>(
  endpoint: string,
  params: Record<string, string | number | undefined>,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings(),
  init: RequestInit = { method: 'GET' }
): Promise<T> {
  const url = apiUrl(settings.baseUrl, endpoint, params);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let body: any = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { message: text };
  }
  if (!response.ok) {
    throw new HipoRequestError(response.status, body.message || response.statusText);
  }
  return body as T;
}

export function fetchTree(path: string, settings?: ServerConnection.ISettings): Promise<ITree> {
  return getJson<ITree>('tree', { path }, settings);
}

export function fetchNode(
  path: string,
  file: string,
  settings?: ServerConnection.ISettings
): Promise<INode> {
  return getJson<INode>('node', { path, file }, settings);
}

export function recall(
  path: string,
  q: string,
  options: IRecallOptions = {},
  settings?: ServerConnection.ISettings
): Promise<IRecallResult> {
  return getJson<IRecallResult>('recall', { path, q, ...options }, settings);
}

export function fetchBudget(path: string, settings?: ServerConnection.ISettings): Promise<IBudget> {
  return getJson<IBudget>('budget', { path }, settings);
}

export function fetchRecent(
  path: string,
  n = 10,
  settings?: ServerConnection.ISettings
): Promise<IRecent> {
  return getJson<IRecent>('recent', { path, n }, settings);
}

export function fetchChanges(
  path: string,
  settings?: ServerConnection.ISettings
): Promise<IChanges> {
  return getJson<IChanges>('changes', { path }, settings);
}

export async function fetchSent(
  path: string,
  settings?: ServerConnection.ISettings
): Promise<ISent | null> {
  return (await getJson<{ sent: ISent | null }>('sent', { path }, settings)).sent;
}

export function fetchRules(path: string, settings?: ServerConnection.ISettings): Promise<IRules> {
  return getJson<IRules>('rules', { path }, settings);
}

/** Accept a proposed rule in the user's name (the one write: POST, with Jupyter's XSRF). */
export function acceptRule(
  path: string,
  id: string,
  settings?: ServerConnection.ISettings
): Promise<IAccepted> {
  return getJson<IAccepted>('rules/accept', { path }, settings, {
    method: 'POST',
    body: JSON.stringify({ id })
  });
}

/** Forget a checkpoint for good, in the user's name (its raw log keeps a tombstone). */
export function forgetCheckpoint(
  path: string,
  ref: CheckpointRef,
  reason = '',
  settings?: ServerConnection.ISettings
): Promise<IForgotten> {
  return getJson<IForgotten>('forget', { path }, settings, {
    method: 'POST',
    body: JSON.stringify({ ...ref, reason })
  });
}

/** Write the user's correction of a checkpoint, which supersedes it in recall. */
export function correctCheckpoint(
  path: string,
  ref: CheckpointRef,
  body: string,
  settings?: ServerConnection.ISettings
): Promise<ICorrected> {
  return getJson<ICorrected>('correct', { path }, settings, {
    method: 'POST',
    body: JSON.stringify({ ...ref, body })
  });
}

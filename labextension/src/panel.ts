/**
 * The "Memory" sidebar: Topics Index, context budget, rules (and the rules others proposed, each
 * with an Accept button), recent checkpoints and recall search for the memory beside the
 * notebook in focus; each checkpoint (a recent one, a raw recall hit) can be corrected or, after
 * a confirm, forgotten for good. One widget; all server calls go through ./request.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import {
  CheckpointRef,
  IBudget,
  IBudgetPart,
  IHit,
  INodeRef,
  IRecallResult,
  IRecent,
  ISent,
  IRule,
  IRules,
  ITopic,
  ITree,
  acceptRule,
  correctCheckpoint,
  fetchBudget,
  fetchChanges,
  fetchNode,
  fetchRecent,
  fetchSent,
  fetchRules,
  fetchTree,
  forgetCheckpoint,
  recall
} from './request';
import { forgetNotice } from './forgetnotice';
import { visible } from './visible';

export const EMPTY_MESSAGE = 'No memory yet — run %load_ext hipo';
export const NO_NOTEBOOK_MESSAGE = 'Open a notebook to see its memory.';
export const RECENT_COUNT = 8;
export const RECALL_K = 8;
/** How often the panel asks whether the memory changed (a write by the CLI, MCP, a kernel). */
export const POLL_MS = 1000;

export type PanelState = 'no-notebook' | 'loading' | 'empty' | 'ready' | 'error';
export type Level = 'healthy' | 'tight' | 'over';

/** A Layer 1 part against its own budget: tight from 80%, over once it is cut (above 100%). */
export function partLevel(part: Pick<IBudgetPart, 'tokens' | 'budget'>): Level {
  const fill = part.budget > 0 ? part.tokens / part.budget : part.tokens > 0 ? Infinity : 0;
  if (fill > 1) {
    return 'over';
  }
  return fill >= 0.8 ? 'tight' : 'healthy';
}

/** Percent of the budget a bar is drawn to (capped at 100). */
export function barPercent(part: Pick<IBudgetPart, 'tokens' | 'budget'>): number {
  if (part.budget <= 0) {
    return part.tokens > 0 ? 100 : 0;
  }
  return Math.min(100, Math.round((part.tokens / part.budget) * 100));
}

/** How long ago, in words: "today", "yesterday", "3 days ago", "2 weeks ago", "5 months ago". */
export function ageText(days: number): string {
  const ago = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  if (days <= 0) {
    return 'today';
  }
  if (days === 1) {
    return 'yesterday';
  }
  if (days < 14) {
    return ago(days, 'day');
  }
  if (days < 60) {
    return ago(Math.floor(days / 7), 'week');
  }
  if (days < 730) {
    return ago(Math.floor(days / 30), 'month');
  }
  return ago(Math.floor(days / 365), 'year');
}

export function topicTitle(topic: ITopic): string {
  const checkpoints = `${topic.count} checkpoint${topic.count === 1 ? '' : 's'}`;
  return `${topic.name} · ${topic.type} · ${ageText(topic.age_days)} · ${checkpoints}`;
}

/** One line of the "Last %%ask sent" list: what, how many tokens, and from where. */
export function sentPartLine(part: ISent['parts'][number]): string {
  const what = part.kind === 'layer1' ? `Layer 1 · ${part.name}` : part.name;
  return `${what} · ${part.tokens.toLocaleString('en-US')} tokens · ${part.source}`;
}

/** The file a sent piece's text is in ("memory/2026-03-12.md#L14" -> its log), or null for a
 * piece that is no file (the rules index). */
export function sentPartFile(part: Pick<ISent['parts'][number], 'source'>): string | null {
  const file = (part.source ?? '').split('#')[0].trim();
  return file.endsWith('.md') ? file : null;
}

/** The one line that stands for the recalled pieces of a call until it is opened. */
export function recalledLine(parts: Pick<ISent['parts'][number], 'tokens'>[]): string {
  const tokens = parts.reduce((sum, part) => sum + part.tokens, 0).toLocaleString('en-US');
  const pieces = parts.length === 1 ? '1 recalled piece' : `${parts.length} recalled pieces`;
  return `${pieces} · ${tokens} tokens`;
}

/** The line under the header while the model writes summaries in the background. */
export function owedLine(owed: number): string {
  if (owed <= 0) {
    return '';
  }
  const summaries = owed === 1 ? '1 summary' : `${owed} summaries`;
  return `Claude is writing ${summaries} in the background; Layer 1 uses the extractive one until each lands`;
}

export const COLLAPSED_KEY = 'hipo-memory:collapsed';
/** Folded until the user opens them: the longest lists, below what the model saw. */
export const DEFAULT_COLLAPSED = ['topics'];

/** The sections the user folded (localStorage), or the defaults the first time. */
export function loadCollapsed(storage: Pick<Storage, 'getItem'> | null = safeStorage()): Set<string> {
  try {
    const saved = storage?.getItem(COLLAPSED_KEY);
    const parsed: unknown = saved ? JSON.parse(saved) : DEFAULT_COLLAPSED;
    return new Set(Array.isArray(parsed) ? parsed.filter(x => typeof x === 'string') : DEFAULT_COLLAPSED);
  } catch {
    return new Set(DEFAULT_COLLAPSED);
  }
}

export function saveCollapsed(
  collapsed: Set<string>,
  storage: Pick<Storage, 'setItem'> | null = safeStorage()
): void {
  try {
    storage?.setItem(COLLAPSED_KEY, JSON.stringify([...collapsed].sort()));
  } catch {
    // private mode or a full store: folding still works, it is only not remembered
  }
}

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** A node file as JupyterLab names it: relative to the server root, not to the memory root. */
export function serverPath(root: string, file: string): string {
  return root ? `${root.replace(/\/+$/, '')}/${file}` : file;
}

export function hitPath(hit: IHit): string {
  return hit.path.length ? hit.path.join(' → ') : hit.file;
}

/**
 * The muted line under a checkpoint or hit saying where it came from ("from analysis.ipynb
 * cell 7 via magic, model claude-…"), or null when the checkpoint records nothing (written
 * before provenance existed, by hand, or by Hipocampus): no line rather than "unknown".
 */
export function provenanceLine(provenance: string | null | undefined): string | null {
  const text = (provenance ?? '').trim();
  return text ? `from ${text}` : null;
}

/** A rule as one line: "before a deploy → never on Friday". */
export function ruleLine(rule: Pick<IRule, 'trigger' | 'rule'>): string {
  return `${rule.trigger} → ${rule.rule}`;
}

/** Who proposed a rule ("proposed by MCP"), from the same phrase provenance lines use. */
export function proposedBy(rule: Pick<IRule, 'provenance' | 'writer'>): string {
  return `proposed by ${(rule.provenance ?? '').trim() || rule.writer}`;
}

export interface IMemoryPanelOptions {
  /** Open a file (path relative to the server root) in JupyterLab. */
  openFile?: (path: string) => void;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = visible(text); // stored text is shown, never obeyed (bidi, zero-width)
  }
  return node;
}

export class MemoryPanel extends Widget {
  constructor(options: IMemoryPanelOptions = {}) {
    super();
    this._openFile = options.openFile;
    this.id = 'hipo-memory';
    this.addClass('jp-HipoMemory');
    this.title.caption = 'Memory';

    const header = el('div', 'jp-HipoMemory-header');
    header.appendChild(el('h2', 'jp-HipoMemory-title', 'Memory'));
    this._folderNode = el('span', 'jp-HipoMemory-folder');
    header.appendChild(this._folderNode);
    const refresh = el('button', 'jp-HipoMemory-refresh jp-mod-styled', '⟳');
    refresh.title = 'Refresh';
    refresh.addEventListener('click', () => void this.refresh());
    header.appendChild(refresh);
    this.node.appendChild(header);

    this._messageNode = el('div', 'jp-HipoMemory-message');
    this.node.appendChild(this._messageNode);

    this._owedNode = el('div', 'jp-HipoMemory-hint jp-HipoMemory-owed');
    this.node.appendChild(this._owedNode);

    // What the model just saw comes first: the last call's pieces, above everything else.
    this._sentNode = el('div', 'jp-HipoMemory-sent');
    this.node.appendChild(this._sentNode);

    this._searchForm = el('form', 'jp-HipoMemory-search');
    this._searchInput = el('input', 'jp-HipoMemory-searchInput jp-mod-styled');
    this._searchInput.type = 'search';
    this._searchInput.placeholder = 'Search memory';
    this._searchForm.appendChild(this._searchInput);
    this._searchForm.appendChild(el('button', 'jp-HipoMemory-searchButton jp-mod-styled', 'Recall'));
    this._searchForm.addEventListener('submit', event => {
      event.preventDefault();
      void this.search(this._searchInput.value);
    });
    this.node.appendChild(this._searchForm);

    this._resultsNode = el('div', 'jp-HipoMemory-results');
    this._topicsNode = el('div', 'jp-HipoMemory-topics');
    this._budgetNode = el('div', 'jp-HipoMemory-budget');
    this._recentNode = el('div', 'jp-HipoMemory-recent');
    this._rulesNode = el('div', 'jp-HipoMemory-rules');
    this._previewNode = el('div', 'jp-HipoMemory-preview');
    for (const node of [
      this._resultsNode,
      this._previewNode,
      this._budgetNode,
      this._rulesNode,
      this._recentNode,
      this._topicsNode
    ]) {
      this.node.appendChild(node);
    }
    const sections: [HTMLElement, string][] = [
      [this._sentNode, 'sent'],
      [this._resultsNode, 'results'],
      [this._previewNode, 'preview'],
      [this._budgetNode, 'budget'],
      [this._rulesNode, 'rules'],
      [this._recentNode, 'recent'],
      [this._topicsNode, 'topics']
    ];
    for (const [node, key] of sections) {
      node.dataset.section = key;
      node.classList.add('jp-HipoMemory-section');
    }
    this._render();
  }

  get notebookPath(): string | null {
    return this._path;
  }

  get state(): PanelState {
    return this._state;
  }

  get tree(): ITree | null {
    return this._tree;
  }

  get lastResult(): IRecallResult | null {
    return this._result;
  }

  get openedFile(): string | null {
    return this._opened;
  }

  /** Follow a notebook (path relative to the server root), or none. */
  async setNotebook(path: string | null): Promise<void> {
    if (path === this._path) {
      return;
    }
    this._path = path;
    this._result = null;
    this._opened = null;
    this._preview = null;
    this._searchInput.value = '';
    this._openTopics.clear();
    this._stamp = null;
    await this.refresh();
  }

  /**
   * Ask the server whether the memory changed and refresh when it did: a write by `hipo
   * remember`, an MCP agent or another kernel shows within a second or two, without a cell run.
   * Skipped while the panel is hidden or the page is in the background.
   */
  async poll(): Promise<void> {
    const path = this._path;
    if (path === null || this._polling || !this.isVisible || document.hidden) {
      return;
    }
    this._polling = true;
    try {
      const { stamp } = await fetchChanges(path);
      if (path === this._path) {
        const changed = this._stamp !== null && stamp !== this._stamp;
        this._stamp = stamp;
        if (changed) {
          await this.requestRefresh();
        }
      }
    } catch {
      // the next poll tries again; a refresh shows the error if the server stays away
    } finally {
      this._polling = false;
    }
  }

  /** Reload tree, budget and recent checkpoints; answers for an older notebook are dropped. */
  async refresh(): Promise<void> {
    const generation = ++this._generation;
    const path = this._path;
    if (path === null) {
      this._setState('no-notebook');
      return;
    }
    if (!this._tree) {
      this._setState('loading');
    }
    try {
      const tree = await fetchTree(path);
      if (generation !== this._generation) {
        return;
      }
      if (!tree.has_memory) {
        this._tree = tree;
        this._budget = null;
        this._recent = null;
        this._rules = null;
        this._setState('empty');
        return;
      }
      const [budget, recent, rules, sent] = await Promise.all([
        fetchBudget(path),
        fetchRecent(path, RECENT_COUNT),
        // an older server has no /rules: the section is left out, the rest still shows
        Promise.resolve(fetchRules(path)).catch(() => null),
        fetchSent(path)
      ]);
      if (generation !== this._generation) {
        return;
      }
      this._tree = tree;
      this._budget = budget;
      this._recent = recent;
      this._sent = sent;
      this._rules = rules ?? null;
      this._error = '';
      this._setState('ready');
    } catch (error) {
      if (generation !== this._generation) {
        return;
      }
      this._tree = null;
      this._error = error instanceof Error ? error.message : String(error);
      this._setState('error');
    }
  }

  /**
   * Refresh after a cell ran. Runs at once, or, while a refresh is in flight, once more after
   * it: a burst of executed cells costs at most two round trips.
   */
  requestRefresh(): Promise<void> {
    if (this._refreshing) {
      this._refreshAgain = true;
      return this._refreshing;
    }
    const run = async (): Promise<void> => {
      do {
        this._refreshAgain = false;
        await this.refresh();
      } while (this._refreshAgain);
      this._refreshing = null;
    };
    this._refreshing = run();
    return this._refreshing;
  }

  async search(query: string): Promise<void> {
    const path = this._path;
    query = query.trim();
    this._searchInput.value = query;
    if (!path || !query) {
      this._result = null;
      this._render();
      return;
    }
    // Only a newer search or another notebook makes this answer stale: a refresh meanwhile
    // (a cell ran, the poll saw a write) reads the memory again but asks nothing of the search.
    const asked = ++this._searches;
    try {
      const result = await recall(path, query, { k: RECALL_K });
      if (asked !== this._searches || path !== this._path) {
        return;
      }
      this._result = result;
      this._searchError = '';
    } catch (error) {
      if (asked !== this._searches || path !== this._path) {
        return;
      }
      this._result = null;
      this._searchError = error instanceof Error ? error.message : String(error);
    }
    this._render();
  }

  get rules(): IRules | null {
    return this._rules;
  }

  /** Accept a proposed rule in the user's name, then show the rules as they now are. */
  async accept(id: string): Promise<void> {
    const path = this._path;
    if (!path) {
      return;
    }
    try {
      await acceptRule(path, id);
      this._rulesError = '';
    } catch (error) {
      this._rulesError = error instanceof Error ? error.message : String(error);
      this._render();
      return;
    }
    await this.refresh();
  }

  /** Asked before a forget: nothing is removed unless it answers true. */
  confirmForget: (title: string) => boolean = title =>
    window.confirm(
      `Forget “${visible(title)}” for good? Its text is removed from every file of the memory; ` +
        'its log keeps only a line saying it was forgotten.'
    );

  /** Asks for a correction's text (null: cancelled, nothing written). */
  askCorrection: (title: string) => string | null = title =>
    window.prompt(`Correct “${visible(title)}”: the corrected text (recall then shows it instead)`, '');

  /** Forget a checkpoint for good, once the user confirms; then show the memory as it is. */
  async forget(ref: CheckpointRef, title: string): Promise<void> {
    const path = this._path;
    if (!path || !this.confirmForget(title)) {
      return;
    }
    await this._edit(async () => {
      return forgetNotice(await forgetCheckpoint(path, ref));
    });
  }

  /** Write the user's correction of a checkpoint, which then replaces it in recall. */
  async correct(ref: CheckpointRef, title: string): Promise<void> {
    const path = this._path;
    const text = path ? this.askCorrection(title) : null;
    if (!path || text === null || !text.trim()) {
      return;
    }
    await this._edit(async () => {
      await correctCheckpoint(path, ref, text);
      return '';
    });
  }

  private async _edit(write: () => Promise<string>): Promise<void> {
    try {
      this._editError = await write();
    } catch (error) {
      this._editError = error instanceof Error ? error.message : String(error);
      this._render();
      return;
    }
    await this.refresh();
    const query = this._result?.query;
    if (query) {
      await this.search(query); // the hits as they are now
    }
  }

  /** Show one node (or raw log) in the preview; the preview can open it in an editor. */
  async openNode(file: string): Promise<void> {
    const path = this._path;
    if (!path) {
      return;
    }
    try {
      const node = await fetchNode(path, file);
      if (path !== this._path) {
        return;
      }
      this._opened = file;
      this._preview = node.content;
    } catch (error) {
      this._opened = file;
      this._preview = null;
      this._previewError = error instanceof Error ? error.message : String(error);
    }
    this._render();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._timer = window.setInterval(() => void this.poll(), POLL_MS);
  }

  protected onBeforeDetach(msg: Message): void {
    window.clearInterval(this._timer);
    super.onBeforeDetach(msg);
  }

  /** Opening the sidebar shows what happened while it was closed. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (this._path !== null) {
      void this.requestRefresh();
    }
  }

  private _setState(state: PanelState): void {
    this._state = state;
    this._render();
  }

  private _render(): void {
    const state = this._state;
    const tree = this._tree;
    this._folderNode.textContent = visible(tree ? tree.folder || tree.root : '');
    this._folderNode.title = tree ? `memory of ${tree.root || 'the server root'}` : '';
    this._messageNode.textContent =
      state === 'no-notebook'
        ? NO_NOTEBOOK_MESSAGE
        : state === 'empty'
          ? EMPTY_MESSAGE
          : state === 'loading'
            ? 'Loading…'
            : state === 'error'
              ? this._error
              : '';
    this._messageNode.className = `jp-HipoMemory-message jp-HipoMemory-${state}`;
    const ready = state === 'ready';
    const owed = ready ? owedLine(tree?.owed_summaries ?? 0) : '';
    this._owedNode.textContent = owed;
    this._owedNode.hidden = !owed;
    this._searchForm.hidden = !ready;
    this._renderResults(ready);
    this._renderPreview(ready);
    this._renderTopics(ready);
    this._renderBudget(ready ? this._budget : null);
    this._renderRules(ready ? this._rules : null);
    this._renderRecent(ready ? this._recent : null);
    this._renderSent(ready ? this._sent : null);
  }

  /**
   * A section's title: a toggle that folds the section to its title line. Folded sections
   * are remembered in localStorage (`collapsedSections`), so a reload keeps the panel as the
   * user left it.
   */
  private _section(node: HTMLElement, title: string): HTMLElement {
    const key = node.dataset.section ?? '';
    const heading = el('h3', 'jp-HipoMemory-sectionTitle');
    const toggle = el('button', 'jp-HipoMemory-toggle', title);
    const collapsed = this._collapsed.has(key);
    toggle.setAttribute('aria-expanded', String(!collapsed));
    toggle.title = collapsed ? 'Show this section' : 'Fold this section';
    toggle.addEventListener('click', () => {
      if (this._collapsed.has(key)) {
        this._collapsed.delete(key);
      } else {
        this._collapsed.add(key);
      }
      saveCollapsed(this._collapsed);
      this._render();
    });
    heading.appendChild(toggle);
    node.replaceChildren(heading);
    node.classList.toggle('jp-mod-collapsed', collapsed);
    return node;
  }

  private _nodeButton(label: string, file: string | null, status: string | null): HTMLElement {
    const button = el('button', 'jp-HipoMemory-node', label);
    if (status) {
      button.dataset.status = status;
      button.title = visible(`${file} (${status})`);
    }
    if (file) {
      button.dataset.file = file;
      button.addEventListener('click', () => void this.openNode(file));
    } else {
      button.disabled = true;
      button.title = 'not built yet: run %hipo compact';
    }
    return button;
  }

  private _renderResults(ready: boolean): void {
    const node = this._resultsNode;
    node.replaceChildren();
    node.hidden = !ready || (!this._result && !this._searchError);
    if (node.hidden) {
      return;
    }
    if (this._searchError) {
      node.appendChild(el('div', 'jp-HipoMemory-error', this._searchError));
      return;
    }
    const result = this._result!;
    // Say so when meaning, not only words, ranked the hits (the [semantic] extra).
    const ranking = result.mode === 'hybrid' || result.mode === 'semantic' ? ` (${result.mode})` : '';
    this._section(node, `Recall: “${result.query}”${ranking}`);
    if (!result.hits.length) {
      const hint = result.did_you_mean.length
        ? ` Did you mean: ${result.did_you_mean.join(', ')}?`
        : '';
      node.appendChild(el('div', 'jp-HipoMemory-noHits', `No memory of “${result.query}”.${hint}`));
      return;
    }
    const list = el('ul', 'jp-HipoMemory-hits');
    for (const hit of result.hits) {
      // The answer first: the title, the passage that matched, where it came from; the way
      // down the tree behind a click.
      const item = el('li', 'jp-HipoMemory-hit');
      item.appendChild(this._nodeButton(hit.title, hit.file, null));
      item.appendChild(el('div', 'jp-HipoMemory-snippet', hit.snippet));
      item.appendChild(el('div', 'jp-HipoMemory-hitMeta', `${hit.date} · ${hit.kind}`));
      this._appendProvenance(item, hit.provenance);
      if (hit.kind === 'raw') {
        this._appendEdits(item, { file: hit.file, line: hit.line }, hit.title);
      }
      const path = el('details', 'jp-HipoMemory-hitPath');
      path.appendChild(el('summary', 'jp-HipoMemory-hitPathToggle', 'path in the tree'));
      path.appendChild(el('div', 'jp-HipoMemory-hitPathText', hitPath(hit)));
      item.appendChild(path);
      list.appendChild(item);
    }
    node.appendChild(list);
  }

  private _renderPreview(ready: boolean): void {
    const node = this._previewNode;
    node.replaceChildren();
    node.hidden = !ready || this._opened === null;
    if (node.hidden) {
      return;
    }
    const file = this._opened!;
    this._section(node, file);
    const actions = el('div', 'jp-HipoMemory-previewActions');
    if (this._openFile && this._tree) {
      const open = el('button', 'jp-HipoMemory-openFile jp-mod-styled', 'Open in editor');
      const target = serverPath(this._tree.root, file);
      open.addEventListener('click', () => this._openFile!(target));
      actions.appendChild(open);
    }
    const close = el('button', 'jp-HipoMemory-closePreview jp-mod-styled', 'Close');
    close.addEventListener('click', () => {
      this._opened = null;
      this._render();
    });
    actions.appendChild(close);
    node.appendChild(actions);
    node.appendChild(
      this._preview !== null
        ? el('pre', 'jp-HipoMemory-previewText', this._preview)
        : el('div', 'jp-HipoMemory-error', this._previewError)
    );
  }

  private _renderTopics(ready: boolean): void {
    const node = this._topicsNode;
    node.hidden = !ready;
    if (!ready || !this._tree) {
      node.replaceChildren();
      return;
    }
    // A topic opened or closed just now has its `open` already, but its 'toggle' event comes a
    // task later: read the state from the topics on screen, or a redraw in between (a refresh
    // after a write) would close the topic the user just opened.
    for (const shown of node.querySelectorAll<HTMLDetailsElement>('.jp-HipoMemory-topic')) {
      const name = shown.dataset.topic ?? '';
      if (shown.open) {
        this._openTopics.add(name);
      } else {
        this._openTopics.delete(name);
      }
    }
    const topics = this._tree.topics;
    this._section(node, `Topics Index (${topics.length})`);
    if (!topics.length) {
      node.appendChild(
        el('div', 'jp-HipoMemory-hint', 'No topics yet: %%remember <title> #topic')
      );
    }
    for (const topic of topics) {
      node.appendChild(this._topicNode(topic));
    }
  }

  private _topicNode(topic: ITopic): HTMLElement {
    const details = el('details', 'jp-HipoMemory-topic');
    details.dataset.topic = topic.name;
    details.open = this._openTopics.has(topic.name);
    details.addEventListener('toggle', () => {
      if (details.open) {
        this._openTopics.add(topic.name);
      } else {
        this._openTopics.delete(topic.name);
      }
    });
    details.appendChild(el('summary', 'jp-HipoMemory-topicTitle', topicTitle(topic)));
    if (topic.keywords.length) {
      details.appendChild(el('div', 'jp-HipoMemory-keywords', topic.keywords.join(', ')));
    }
    const periods = el('ul', 'jp-HipoMemory-periods');
    for (const period of topic.periods) {
      const item = el('li', 'jp-HipoMemory-period');
      item.appendChild(this._refButton(period));
      if (period.children.length) {
        const weeks = el('ul', 'jp-HipoMemory-weeks');
        for (const week of period.children) {
          const weekItem = el('li');
          weekItem.appendChild(this._refButton(week));
          weeks.appendChild(weekItem);
        }
        item.appendChild(weeks);
      }
      periods.appendChild(item);
    }
    if (topic.last_date) {
      const latest = el('li', 'jp-HipoMemory-period');
      latest.appendChild(
        this._nodeButton(`${topic.last_date} (raw log)`, `memory/${topic.last_date}.md`, null)
      );
      periods.appendChild(latest);
    }
    details.appendChild(periods);
    return details;
  }

  private _refButton(ref: INodeRef): HTMLElement {
    const label = ref.status ? `${ref.period} · ${ref.status}` : ref.period;
    return this._nodeButton(label, ref.file, ref.status);
  }

  private _renderBudget(budget: IBudget | null): void {
    const node = this._budgetNode;
    node.hidden = budget === null;
    if (budget === null) {
      node.replaceChildren();
      return;
    }
    this._section(
      node,
      `Context budget · ${budget.total_tokens.toLocaleString('en-US')} / ${budget.total_budget.toLocaleString('en-US')} tokens`
    );
    for (const part of budget.parts) {
      const row = el('div', 'jp-HipoMemory-bar');
      row.dataset.part = part.name;
      row.dataset.level = partLevel(part);
      row.appendChild(el('span', 'jp-HipoMemory-barName', part.name));
      const track = el('span', 'jp-HipoMemory-barTrack');
      const fill = el('span', `jp-HipoMemory-barFill jp-HipoMemory-${partLevel(part)}`);
      fill.style.width = `${barPercent(part)}%`;
      track.appendChild(fill);
      row.appendChild(track);
      row.appendChild(
        el(
          'span',
          'jp-HipoMemory-barLabel',
          `${part.tokens.toLocaleString('en-US')} / ${part.budget.toLocaleString('en-US')}`
        )
      );
      node.appendChild(row);
    }
  }

  /** The rules in force, then the proposals, each with who proposed it and Accept. */
  private _renderRules(rules: IRules | null): void {
    const node = this._rulesNode;
    node.hidden = rules === null;
    if (rules === null) {
      node.replaceChildren();
      return;
    }
    const active = rules.rules.filter(rule => rule.active);
    this._section(node, `Rules (${active.length})`);
    if (!active.length && !rules.proposals.length) {
      node.appendChild(
        el('div', 'jp-HipoMemory-hint', 'No rules yet: %%remember <title> --trigger "…" --rule "…"')
      );
    }
    const list = el('ul', 'jp-HipoMemory-ruleList');
    for (const rule of active) {
      const item = el('li', 'jp-HipoMemory-rule');
      item.appendChild(this._nodeButton(ruleLine(rule), rule.file, null));
      list.appendChild(item);
    }
    node.appendChild(list);
    if (this._rulesError) {
      node.appendChild(el('div', 'jp-HipoMemory-error', this._rulesError));
    }
    if (!rules.proposals.length) {
      return;
    }
    node.appendChild(
      el('h4', 'jp-HipoMemory-proposalsTitle', `Proposed, not in force (${rules.proposals.length})`)
    );
    const proposals = el('ul', 'jp-HipoMemory-proposals');
    for (const proposal of rules.proposals) {
      const item = el('li', 'jp-HipoMemory-proposal');
      item.dataset.id = proposal.id ?? '';
      item.appendChild(this._nodeButton(ruleLine(proposal), proposal.file, null));
      const who = el('span', 'jp-HipoMemory-provenance', proposedBy(proposal));
      who.title = visible(`${proposedBy(proposal)} · ID ${proposal.id ?? ''}`);
      item.appendChild(who);
      const accept = el('button', 'jp-HipoMemory-accept jp-mod-styled', 'Accept');
      accept.title = 'Make this rule yours: it goes into every prompt from now on';
      if (proposal.id) {
        const id = proposal.id;
        accept.addEventListener('click', () => {
          accept.disabled = true;
          void this.accept(id);
        });
      } else {
        accept.disabled = true;
      }
      item.appendChild(accept);
      proposals.appendChild(item);
    }
    node.appendChild(proposals);
  }

  private _renderRecent(recent: IRecent | null): void {
    const node = this._recentNode;
    node.hidden = recent === null;
    if (recent === null) {
      node.replaceChildren();
      return;
    }
    this._section(node, 'Recent checkpoints');
    if (this._editError) {
      node.appendChild(el('div', 'jp-HipoMemory-error', this._editError));
    }
    const list = el('ul', 'jp-HipoMemory-checkpoints');
    for (const checkpoint of recent.checkpoints) {
      const item = el('li', 'jp-HipoMemory-checkpoint');
      const file = checkpoint.date ? `memory/${checkpoint.date}.md` : null;
      item.appendChild(this._nodeButton(checkpoint.title, file, null));
      const tags = checkpoint.tags.length ? ' · #' + checkpoint.tags.join(' #') : '';
      const meta = el('span', 'jp-HipoMemory-checkpointMeta', `${checkpoint.date ?? ''} · ${checkpoint.type}${tags}`);
      item.appendChild(meta);
      this._appendProvenance(meta, checkpoint.provenance, 'span');
      if (checkpoint.id) {
        this._appendEdits(item, { id: checkpoint.id }, checkpoint.title);
      }
      list.appendChild(item);
    }
    node.appendChild(list);
  }

  private _renderSent(sent: ISent | null): void {
    const node = this._sentNode;
    node.hidden = sent === null;
    if (sent === null) {
      node.replaceChildren();
      return;
    }
    const total = sent.tokens.toLocaleString('en-US');
    this._section(node, `What the model saw · ${total} tokens`);
    node.appendChild(el('div', 'jp-HipoMemory-hint', `${sent.model} · ${sent.at}`));
    // Layer 1's parts line by line; the recalled pieces, often dozens, behind one line that
    // opens them (remembered while the panel lives), so the section stays a glance.
    const layer1 = sent.parts.filter(part => part.kind === 'layer1');
    const recalled = sent.parts.filter(part => part.kind !== 'layer1');
    const list = el('ul', 'jp-HipoMemory-sentParts');
    for (const part of layer1) {
      list.appendChild(this._sentItem(part));
    }
    if (!sent.parts.length) {
      list.appendChild(el('li', 'jp-HipoMemory-hint', 'No memory: --no-memory and nothing recalled'));
    }
    node.appendChild(list);
    if (recalled.length) {
      const details = el('details', 'jp-HipoMemory-recalled');
      details.open = this._recalledOpen;
      details.addEventListener('toggle', () => {
        this._recalledOpen = details.open;
      });
      details.appendChild(el('summary', 'jp-HipoMemory-recalledSummary', recalledLine(recalled)));
      const pieces = el('ul', 'jp-HipoMemory-sentParts');
      for (const part of recalled) {
        pieces.appendChild(this._sentItem(part));
      }
      details.appendChild(pieces);
      node.appendChild(details);
    }
  }

  private _sentItem(part: ISent['parts'][number]): HTMLElement {
    const item = el('li', 'jp-HipoMemory-sentPart');
    item.dataset.kind = part.kind;
    const file = sentPartFile(part);
    const line = el(file ? 'button' : 'span', 'jp-HipoMemory-sentLine', sentPartLine(part));
    if (file) {
      // the text on demand: the file the piece came from, in the preview below
      line.title = `Show ${file}`;
      line.addEventListener('click', () => void this.openNode(file));
    }
    item.appendChild(line);
    this._appendProvenance(item, part.provenance);
    return item;
  }

  /** Correct and Forget for one checkpoint (the user's own actions: the server's POSTs). */
  private _appendEdits(item: HTMLElement, ref: CheckpointRef, title: string): void {
    const actions = el('div', 'jp-HipoMemory-edits');
    const correct = el('button', 'jp-HipoMemory-correct jp-mod-styled', 'Correct');
    correct.title = 'Write a correction: recall shows it instead of this one';
    correct.addEventListener('click', () => void this.correct(ref, title));
    const forget = el('button', 'jp-HipoMemory-forget jp-mod-styled', 'Forget');
    forget.title = 'Remove this checkpoint for good (asks first)';
    forget.addEventListener('click', () => void this.forget(ref, title));
    actions.append(correct, forget);
    item.appendChild(actions);
  }

  private _appendProvenance(
    item: HTMLElement,
    provenance: string | null | undefined,
    inline: 'line' | 'span' = 'line'
  ): void {
    const line = provenanceLine(provenance);
    if (line !== null) {
      const node = el('span', 'jp-HipoMemory-provenance', line);
      node.dataset.inline = inline; // "span": on its checkpoint's meta line, after a " · "
      node.title = visible(line); // the whole line on hover when the sidebar is narrow
      item.appendChild(node);
    }
  }

  private _openFile?: (path: string) => void;
  private _path: string | null = null;
  private _state: PanelState = 'no-notebook';
  private _generation = 0;
  private _searches = 0; // searches asked: an answer to an older one is dropped
  private _refreshing: Promise<void> | null = null;
  private _refreshAgain = false;
  private _tree: ITree | null = null;
  private _budget: IBudget | null = null;
  private _recent: IRecent | null = null;
  private _sent: ISent | null = null;
  private _stamp: string | null = null;
  private _polling = false;
  private _timer = 0;
  private _rules: IRules | null = null;
  private _rulesError = '';
  private _editError = '';
  private _result: IRecallResult | null = null;
  private _opened: string | null = null;
  private _preview: string | null = null;
  private _error = '';
  private _searchError = '';
  private _previewError = '';
  private _openTopics = new Set<string>();
  private _collapsed = loadCollapsed();
  private _recalledOpen = false;
  private _folderNode: HTMLElement;
  private _messageNode: HTMLElement;
  private _searchForm: HTMLFormElement;
  private _searchInput: HTMLInputElement;
  private _resultsNode: HTMLElement;
  private _topicsNode: HTMLElement;
  private _budgetNode: HTMLElement;
  private _recentNode: HTMLElement;
  private _rulesNode: HTMLElement;
  private _previewNode: HTMLElement;
  private _sentNode: HTMLElement;
  private _owedNode: HTMLElement;
}

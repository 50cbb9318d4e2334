/**
 * The plugin: puts the "Memory" panel in the left sidebar, points it at the notebook in focus
 * and refreshes it after a cell of that notebook runs (a %%remember or an LLM call).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';

import { MemoryPanel } from './panel';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
<g class="jp-icon3" fill="#616161"><path d="M9 3a4 4 0 0 0-4 4v.2A3.5 3.5 0 0 0 3 10.5a3.5 3.5 0 0 0 1.2 2.6A3.5 3.5 0 0 0 7.5 18H8a3 3 0 0 0 3 3h1V3.8A4 4 0 0 0 9 3zm6 0a4 4 0 0 0-3 1.3V21h1a3 3 0 0 0 3-3h.5a3.5 3.5 0 0 0 3.3-4.9A3.5 3.5 0 0 0 21 10.5a3.5 3.5 0 0 0-2-3.2V7a4 4 0 0 0-4-4z"/></g>
</svg>`;

export const memoryIcon = new LabIcon({ name: 'hipo-jupyter:memory', svgstr: ICON_SVG });

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'hipo-jupyter:sidebar',
  description: 'The "Memory" sidebar: topic index, context budget, recent checkpoints, recall.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IDocumentManager],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    docManager: IDocumentManager | null
  ) => {
    const contents = app.serviceManager.contents;
    const panel = new MemoryPanel({
      openFile: path => {
        if (docManager) {
          docManager.openOrReveal(path);
        } else {
          void app.commands.execute('docmanager:open', { path });
        }
      }
    });
    panel.title.icon = memoryIcon;
    app.shell.add(panel, 'left', { rank: 650 });

    // The contents path may carry a drive prefix ("RTC:..."); the server wants the local path.
    const follow = (): void => {
      const current = tracker.currentWidget;
      void panel.setNotebook(current ? contents.localPath(current.context.path) : null);
    };
    tracker.currentChanged.connect(follow);
    tracker.currentWidget?.context.pathChanged.connect(follow);
    tracker.widgetAdded.connect((_, notebook) => notebook.context.pathChanged.connect(follow));
    NotebookActions.executed.connect((_, { notebook }) => {
      if (notebook === tracker.currentWidget?.content) {
        void panel.requestRefresh();
      }
    });
    app.restored.then(follow).catch(() => undefined);
  }
};

export default plugin;

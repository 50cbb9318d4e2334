/**
 * @jest-environment node
 *
 * The request module against a fake `fetch` passed through ServerConnection settings (the
 * documented way to give JupyterLab's client another transport): URLs, auth, errors.
 */
import { ServerConnection } from '@jupyterlab/services';

import {
  HipoRequestError,
  acceptRule,
  apiUrl,
  correctCheckpoint,
  fetchBudget,
  fetchNode,
  fetchRecent,
  fetchRules,
  fetchTree,
  forgetCheckpoint,
  recall
} from '../src/request';

interface ICall {
  url: URL;
  headers: Headers;
  method: string;
  body: string;
}

function fakeServer(status: number, body: unknown): {
  settings: ServerConnection.ISettings;
  calls: ICall[];
} {
  const calls: ICall[] = [];
  const fetch = async (request: RequestInfo | URL): Promise<Response> => {
    const req = request as Request;
    const sent = await req.text();
    calls.push({ url: new URL(req.url), headers: req.headers, method: req.method, body: sent });
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json' }
    });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://127.0.0.1:8888/lab-base/',
    wsUrl: 'ws://127.0.0.1:8888/lab-base/',
    token: 'secret-token',
    fetch: fetch as typeof globalThis.fetch,
    Request,
    Headers
  });
  return { settings, calls };
}

describe('apiUrl', () => {
  it('joins the base URL, the namespace and the endpoint', () => {
    expect(apiUrl('http://h/base/', 'tree', { path: 'a b/n.ipynb' })).toBe(
      'http://h/base/hipo/api/tree?path=a%20b%2Fn.ipynb'
    );
  });

  it('leaves out empty and undefined parameters', () => {
    expect(apiUrl('/', 'recall', { path: 'n.ipynb', q: 'x', since: '', k: undefined })).toBe(
      '/hipo/api/recall?path=n.ipynb&q=x'
    );
  });
});

describe('endpoints', () => {
  it('fetchTree sends the notebook path with the token and returns the JSON', async () => {
    const tree = { root: 'project', has_memory: true, sections: [], topics: [], nodes: [] };
    const { settings, calls } = fakeServer(200, tree);
    await expect(fetchTree('project/analysis.ipynb', settings)).resolves.toEqual(tree);
    expect(calls).toHaveLength(1);
    expect(calls[0].method).toBe('GET');
    expect(calls[0].url.pathname).toBe('/lab-base/hipo/api/tree');
    expect(calls[0].url.searchParams.get('path')).toBe('project/analysis.ipynb');
    expect(calls[0].headers.get('Authorization')).toBe('token secret-token');
  });

  it('each endpoint has its own URL and parameters', async () => {
    const { settings, calls } = fakeServer(200, {});
    await fetchNode('n.ipynb', 'memory/daily/2026-03-12.md', settings);
    await recall('n.ipynb', 'starter tier', { k: 3, type: 'project' }, settings);
    await fetchBudget('n.ipynb', settings);
    await fetchRecent('n.ipynb', 4, settings);
    const seen = calls.map(call => [
      call.url.pathname.replace('/lab-base/hipo/api/', ''),
      Object.fromEntries([...call.url.searchParams].filter(([key]) => !/^\d+$/.test(key)))
    ]);
    expect(seen).toEqual([
      ['node', { path: 'n.ipynb', file: 'memory/daily/2026-03-12.md' }],
      ['recall', { path: 'n.ipynb', q: 'starter tier', k: '3', type: 'project' }],
      ['budget', { path: 'n.ipynb' }],
      ['recent', { path: 'n.ipynb', n: '4' }]
    ]);
  });

  it('reads the rules with a GET and accepts a proposal with a POST of its id', async () => {
    const { settings, calls } = fakeServer(200, { rules: [], proposals: [] });
    await fetchRules('project/n.ipynb', settings);
    await acceptRule('project/n.ipynb', '2026-03-12T10:00:00Z-0c8f886a', settings);
    expect(calls.map(call => [call.method, call.url.pathname])).toEqual([
      ['GET', '/lab-base/hipo/api/rules'],
      ['POST', '/lab-base/hipo/api/rules/accept']
    ]);
    expect(calls[1].url.searchParams.get('path')).toBe('project/n.ipynb');
    expect(JSON.parse(calls[1].body)).toEqual({ id: '2026-03-12T10:00:00Z-0c8f886a' });
    expect(calls[1].headers.get('Authorization')).toBe('token secret-token');
  });

  it('forgets and corrects with a POST naming the checkpoint', async () => {
    const { settings, calls } = fakeServer(200, {});
    await forgetCheckpoint('project/n.ipynb', { file: 'memory/2026-03-12.md', line: 5 }, 'asked', settings);
    await correctCheckpoint('project/n.ipynb', { id: 'abc12345' }, '- outcome: fixed', settings);
    expect(calls.map(call => [call.method, call.url.pathname])).toEqual([
      ['POST', '/lab-base/hipo/api/forget'],
      ['POST', '/lab-base/hipo/api/correct']
    ]);
    expect(JSON.parse(calls[0].body)).toEqual({ file: 'memory/2026-03-12.md', line: 5, reason: 'asked' });
    expect(JSON.parse(calls[1].body)).toEqual({ id: 'abc12345', body: '- outcome: fixed' });
  });

  it('gives a refused acceptance the server message', async () => {
    const { settings } = fakeServer(400, { message: "no proposed rule has the ID 'x'" });
    const error = await acceptRule('n.ipynb', 'x', settings).catch(e => e);
    expect(error).toBeInstanceOf(HipoRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain('no proposed rule');
  });

  it('turns an error reply into HipoRequestError with the server message', async () => {
    const { settings } = fakeServer(404, { message: 'No memory yet in fresh: run %load_ext hipo' });
    const error = await fetchBudget('fresh/n.ipynb', settings).catch(e => e);
    expect(error).toBeInstanceOf(HipoRequestError);
    expect(error.status).toBe(404);
    expect(error.message).toContain('%load_ext hipo');
  });

  it('keeps a non-JSON error body as the message', async () => {
    const { settings } = fakeServer(502, 'Bad gateway');
    const error = await fetchTree('n.ipynb', settings).catch(e => e);
    expect(error).toBeInstanceOf(HipoRequestError);
    expect(error.message).toBe('Bad gateway');
  });
});

// The parts of undici the HTTP seam (./http.ts) uses, each loaded from its own file: the Agent
// (the connection pools), the request function of undici's API, and undici's URL check. undici's
// index loads all 109 of its files (fetch, WebSocket, EventSource, caches, mocks): on 2 cores
// here, 120-140 ms of CPU over a bare node at each start that makes a request, against about
// 55 ms for these 25.
//
// A request is made as undici's own `request(url, options)` makes it (its index.js,
// makeDispatcher): the URL checked by parseURL, then the origin, the path with its query and the
// method handed to the dispatcher's request. undici is pinned (package.json), and
// test/seams/undici-parts.test.ts checks that these are the very functions its index exports, so
// an upgrade that moves or changes them is red there first. The module paths are declared in
// ./undici-modules.d.ts (undici types only its index).
import type { Agent, Dispatcher } from 'undici'

/** What a request is given: undici's request options but the origin and path, which come from the URL. */
export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>

export interface RequestParts {
  Agent: typeof Agent
  /** undici's `request(url, { dispatcher, ...options })`. */
  request(dispatcher: Dispatcher, url: string, options: RequestOptions): Promise<Dispatcher.ResponseData>
}

export async function loadRequestParts(): Promise<RequestParts> {
  const [agent, api, util] = await Promise.all([
    import('undici/lib/dispatcher/agent.js'),
    import('undici/lib/api/api-request.js'),
    import('undici/lib/core/util.js'),
  ])
  const request = api.default
  const { parseURL } = util.default
  return {
    Agent: agent.default,
    request(dispatcher, url, options) {
      const u = parseURL(url)
      return request.call(dispatcher, { ...options, origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname })
    },
  }
}

// The files of undici that ./undici-parts.ts loads, typed from undici's own types (it types only its index).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici'
  const agent: typeof Agent
  export default agent
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  export default request
}

declare module 'undici/lib/core/util.js' {
  const util: { parseURL(url: string): URL }
  export default util
}

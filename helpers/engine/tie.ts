// What tied the base URL to the engine process step argv read (helpers/steps/argv/tie.ts decides
// it): plain data, shared by the steps that read the endpoint for that pid and by the evidence.

/** What tied the base URL to the pid argv read: every proof read at the base URL is about that pid through it. */
export interface EndpointTie {
  /** The pid's listening socket; the container (or pod) named; --pid-cmd's word; the /metrics page's process_start_time_seconds. */
  by: 'listener' | 'container' | 'pod' | 'pid-cmd' | 'start-time'
  /** The tie in words, for observed and the evidence. */
  said: string
}

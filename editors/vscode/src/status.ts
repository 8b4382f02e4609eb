// The agent's state in plain words, for the status bar and the panel
// header. No vscode imports: tested under node.

/**
 * Words for a server state ("WaitingForUserInput" -> "idle"). tool is the
 * tool running now, if any; approving says an approval is open.
 */
export function stateWords(state: string, tool?: string, approving = false): string {
  if (approving) {
    return 'waiting for approval';
  }
  switch (state) {
    case '':
      return 'starting';
    case 'WaitingForUserInput':
      return 'idle';
    case 'CallingLlm':
    case 'ProcessingLlmResponse':
      return 'thinking';
    case 'ExecutingTools':
      return tool ? `running ${tool}` : 'running tools';
    case 'PostToolsHook':
      return 'committing';
    case 'Error':
      return 'retrying';
    case 'ShuttingDown':
      return 'stopped';
    default:
      // An unknown state: split its name into words rather than show it raw.
      return state.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  }
}

/** Whether a server state is busy (a turn in flight). */
export function isBusy(state: string): boolean {
  return state !== 'WaitingForUserInput' && state !== 'ShuttingDown' && state !== '';
}

// vscode-languageclient, the one module that loads it (four fifths of the
// extension's code): bundled apart (dist/client.js) and required once the
// extension is activated, so that activation — and with it the panel —
// does not wait for it.
export {
  ExecuteCommandRequest, LanguageClient, LogMessageNotification, MessageType, ResponseError, ShowMessageNotification, ShowMessageRequest,
  State, TransportKind,
} from 'vscode-languageclient/node';

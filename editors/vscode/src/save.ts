// loom/saveDocuments: save the open documents the agent edited, so the
// server can commit them. No vscode imports: tested under node with stubs.

/** An open document, as far as saving goes. */
export interface SavableDocument {
  /** Key of the document's file (see SaveDeps.key). */
  key: string;
  /** Read again after save(): a getter over the live document. */
  readonly isDirty: boolean;
  /** Saves; resolves false when the save failed or was vetoed. */
  save(): Thenable<boolean> | Promise<boolean>;
}

export interface SaveDeps {
  /** The open text documents. */
  documents(): readonly SavableDocument[];
  /** The key of a URI the server sent (e.g. its file-system path). */
  key(uri: string): string;
}

/**
 * Saves the listed documents that are open and dirty, and returns the URIs
 * that are saved now: those saved here and those open but already clean.
 * Documents that are not open are left out: the server wrote them itself.
 * A failing save leaves its URI out; it never throws.
 */
export async function saveDocuments(uris: readonly string[], deps: SaveDeps): Promise<string[]> {
  const open = new Map<string, SavableDocument>();
  for (const d of deps.documents()) {
    open.set(d.key, d);
  }
  const results = await Promise.all(uris.map(async (uri): Promise<string | undefined> => {
    let doc: SavableDocument | undefined;
    try {
      doc = open.get(deps.key(uri));
    } catch {
      return undefined;
    }
    if (!doc) {
      return undefined;
    }
    if (!doc.isDirty) {
      return uri;
    }
    try {
      // Some hosts (code-server) resolve false for a save that happened:
      // the document being clean afterwards is what counts.
      const ok = await doc.save();
      return ok || !doc.isDirty ? uri : undefined;
    } catch {
      return undefined;
    }
  }));
  return results.filter((u): u is string => u !== undefined);
}

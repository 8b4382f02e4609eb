// The pictures of a prompt written to files for loom.ask (which takes
// paths), in the extension's own storage, never in the workspace; they
// are removed once loom-lsp has read them (it keeps them by content
// hash in its state directory). No vscode imports: tested under node.
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { imageTypes, maxImages, PastedImage, refuseImage } from './shared/images';

/**
 * Writes images into dir (a temporary directory when dir is ""), each
 * checked against the server's limits first; resolves their paths and a
 * function that removes them. Rejects, writing nothing, when one is
 * refused.
 */
export async function writeImages(dir: string, images: readonly PastedImage[]): Promise<{ paths: string[]; remove: () => Promise<void> }> {
  if (images.length > maxImages) {
    throw new Error(`A prompt takes at most ${maxImages} pictures.`);
  }
  const decoded = images.map((img, i) => {
    const bytes = Buffer.from(img.data, 'base64');
    const why = refuseImage(img.name, img.mime, bytes.length, i);
    if (why) {
      throw new Error(why);
    }
    return { img, bytes };
  });
  const base = path.join(dir || path.join(os.tmpdir(), 'loom-vscode'), 'images');
  await fs.mkdir(base, { recursive: true, mode: 0o700 });
  const paths: string[] = [];
  const remove = async () => {
    await Promise.all(paths.map((p) => fs.rm(p, { force: true })));
  };
  try {
    for (const { img, bytes } of decoded) {
      const stem = path.basename(img.name).replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_').slice(0, 40) || 'image';
      const p = path.join(base, `${randomBytes(6).toString('hex')}-${stem}.${imageTypes[img.mime]}`);
      await fs.writeFile(p, bytes, { mode: 0o600 });
      paths.push(p);
    }
  } catch (e) {
    await remove();
    throw e;
  }
  return { paths, remove };
}

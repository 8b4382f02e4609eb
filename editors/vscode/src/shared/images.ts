// Pictures pasted or dropped into the composer, and the limits loom-lsp
// puts on them (workspace/images.go: at most 8 a prompt, 5 MB each,
// PNG, JPEG, GIF or WebP). Checked in the panel, so that a refusal is
// said at once, and again by the server. No imports: it loads in the
// browser and under node.

/** A picture of the composer: its bytes in base64, sent with the prompt. */
export interface PastedImage {
  /** The file's name, or "pasted-N.png" for a picture from the clipboard. */
  name: string;
  mime: string;
  /** The size in bytes. */
  size: number;
  /** The bytes, base64 (no data: prefix). */
  data: string;
}

/** How many pictures a prompt takes, and how big each may be (the server's MaxImages and MaxImageBytes). */
export const maxImages = 8;
export const maxImageBytes = 5 << 20;

/** The picture formats the server takes, by MIME type, with the file extension each is written with. */
export const imageTypes: Readonly<Record<string, string>> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp',
};

/**
 * Why a picture cannot be added (its type, its size, or one too many), in
 * words; undefined when it can.
 */
export function refuseImage(name: string, mime: string, size: number, already: number): string | undefined {
  if (!(mime in imageTypes)) {
    return `${name} is not a picture Loom can send (${mime || 'unknown type'}): use PNG, JPEG, GIF or WebP.`;
  }
  if (size > maxImageBytes) {
    return `${name} is ${(size / (1 << 20)).toFixed(1)} MB, over the ${maxImageBytes >> 20} MB limit of a picture: downscale it first.`;
  }
  if (already >= maxImages) {
    return `A prompt takes at most ${maxImages} pictures.`;
  }
  return undefined;
}

/** "12 KB", "1.4 MB". */
export function sizeWords(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`;
}

/** The label of a picture's chip (and of the prompt's, once sent). */
export function imageLabel(img: { name: string; size: number }): string {
  return `${img.name} (${sizeWords(img.size)})`;
}

// Images pasted or dropped into the prompt box: shown under it as chips (× removes one), sent
// to the kernel over the panel's comm ahead of the prompt that names them (`--image <id>`).
// The kernel fits them to the image limits and keeps them by hash (session/images.py).
import { h } from '../render/dom.js';
import type { PanelImage } from '../protocol.generated';

export const MIMES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
export const MAX_BYTES = 10_000_000; // as the kernel takes them (panel_protocol.py)
export const MAX_IMAGES = 4; // per prompt (panel.py)

export class PastedImages {
  readonly el: HTMLElement;

  constructor(private readonly say: (text: string, level: 'info' | 'warning' | 'error') => void) {
    this.el = h('div', { class: 'forge-panel-images', 'data-testid': 'panel-images', hidden: true });
  }

  /** The image files of a paste or a drop; true when there was one (the event is then ours). */
  take(files: FileList | null | undefined): boolean {
    const images = [...(files ?? [])].filter(f => f.type.startsWith('image/'));
    for (const file of images) {
      if (!MIMES.includes(file.type)) {
        this.say(`${file.type} is not an image the box takes: paste a PNG, JPEG, GIF or WebP.`, 'warning');
      } else if (file.size > MAX_BYTES) {
        this.say(`That image is ${(file.size / 1e6).toFixed(1)} MB; the box takes up to 10 MB.`, 'warning');
      } else if (this.items.length >= MAX_IMAGES) {
        this.say(`A prompt takes at most ${MAX_IMAGES} images.`, 'warning');
      } else {
        void this.add(file);
      }
    }
    return images.length > 0;
  }

  /** The images to send with the prompt; the box is empty of them afterwards. */
  drain(): PanelImage[] {
    const out = this.items.map(i => i.image);
    this.items = [];
    this.render();
    return out;
  }

  private async add(file: File): Promise<void> {
    const url = await new Promise<string>((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
    const data = url.slice(url.indexOf(',') + 1);
    const image_id = 'paste_' + [...crypto.getRandomValues(new Uint8Array(10))]
      .map(b => b.toString(16).padStart(2, '0')).join('');
    this.items.push({ image: { type: 'image', image_id, mime: file.type, data }, name: file.name || 'pasted image', size: file.size });
    this.render();
  }

  private render(): void {
    this.el.replaceChildren(...this.items.map((item, n) => h('span', { class: 'forge-panel-image', 'data-testid': 'panel-image' },
      `${item.name} · ${Math.max(1, Math.round(item.size / 1000))} KB`,
      h('button', {
        type: 'button', class: 'forge-panel-image-remove', title: 'Remove this image', 'aria-label': 'Remove this image',
        onclick: () => { this.items.splice(n, 1); this.render(); }
      }, '×'))));
    this.el.hidden = this.items.length === 0;
  }

  private items: { image: PanelImage; name: string; size: number }[] = [];
}

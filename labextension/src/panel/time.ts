// Short words for when and where: "5 min ago", a notebook's file name.

/** How long ago `seconds` (since the epoch) was, in the words of a list. */
export function ago(seconds: number | null, now: number = Date.now() / 1000): string {
  if (seconds === null || !Number.isFinite(seconds)) {
    return '';
  }
  const d = Math.max(0, now - seconds);
  if (d < 45) {
    return 'just now';
  }
  if (d < 3600) {
    return `${Math.round(d / 60)} min ago`;
  }
  if (d < 86400) {
    return `${Math.round(d / 3600)} h ago`;
  }
  if (d < 7 * 86400) {
    return `${Math.round(d / 86400)} d ago`;
  }
  return new Date(seconds * 1000).toLocaleDateString();
}

/** The file name of a notebook path (the kernels store the full path). */
export function basename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

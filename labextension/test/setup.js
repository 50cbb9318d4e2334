// jsdom has no DragEvent; @lumino/dragdrop subclasses it when @lumino/widgets loads.
if (typeof globalThis.DragEvent === 'undefined' && typeof globalThis.MouseEvent !== 'undefined') {
  globalThis.DragEvent = class DragEvent extends MouseEvent {};
}

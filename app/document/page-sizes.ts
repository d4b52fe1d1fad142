/** Paper sizes in PDF units (72 per inch), portrait. Shared by /blank-pdf and the HTML converter. */
export const PAGE_SIZES = {
  letter: [612, 792],
  legal: [612, 1008],
  ledger: [792, 1224],
  A3: [841.89, 1190.55],
  A4: [595.28, 841.89],
  A5: [419.53, 595.28],
} as const;

export type PageSizeName = keyof typeof PAGE_SIZES;
export const PAGE_SIZE_NAMES = Object.keys(PAGE_SIZES) as [PageSizeName, ...PageSizeName[]];

/** The largest page PDF readers accept without a UserUnit (200 inches). */
export const MAX_PAGE_UNITS = 14400;

export function pageSize(name: PageSizeName, orientation: 'portrait' | 'landscape'): [number, number] {
  const [w, h] = PAGE_SIZES[name];
  return orientation === 'landscape' ? [h, w] : [w, h];
}

/** The app's colours: every text/background pair used is listed in `textPairs` and meets WCAG AA. */
export const palette = {
  page: '#ffffff',
  text: '#1f2937',
  muted: '#4b5563',
  accent: '#1d4ed8',
  onAccent: '#ffffff',
  bubble: '#f3f4f6',
  border: '#6b7280',
  error: '#b91c1c',
  /** Simulation: coverage outlines and unit tests' bars, told apart from the accent of real use. */
  simulated: '#7c3aed',
  /** A person who took a conversation over: their stretches and messages. */
  operator: '#9a3412',
} as const;

/** [foreground, background] of every text the pages show. */
export const textPairs: [keyof typeof palette, keyof typeof palette][] = [
  ['text', 'page'],
  ['muted', 'page'],
  ['accent', 'page'],
  ['onAccent', 'accent'],
  ['text', 'bubble'],
  ['muted', 'bubble'],
  ['accent', 'bubble'],
  ['error', 'page'],
  ['simulated', 'page'],
  ['operator', 'page'],
];

const channel = (value: number): number => {
  const unit = value / 255;
  return unit <= 0.04045 ? unit / 12.92 : ((unit + 0.055) / 1.055) ** 2.4;
};

/** WCAG 2 relative luminance of `#rrggbb`. */
export const relativeLuminance = (hex: string): number => {
  const [r, g, b] = [1, 3, 5].map((start) => channel(Number.parseInt(hex.slice(start, start + 2), 16))) as [
    number,
    number,
    number,
  ];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export const contrastRatio = (first: string, second: string): number => {
  const [light, dark] = [relativeLuminance(first), relativeLuminance(second)].sort((a, b) => b - a) as [number, number];
  return (light + 0.05) / (dark + 0.05);
};

import { ValidationError, type ValidationIssue } from '../kernel/errors';
import type { BrandingImage } from './organization-repository';

/**
 * Branding images arrive as base64. Each is checked from its own header bytes: PNG
 * signature and IHDR size, or the ICO directory (its largest image). Aspect ratios may
 * differ from the required one by `aspectTolerance` (2%), since pixel sizes are integers.
 */
export const aspectTolerance = 0.02;
/** Each image is stored as one item beside the organization record. */
export const maxImageBytes = 300 * 1024;

interface ImageRule {
  format: 'png' | 'ico';
  minWidth: number;
  minHeight: number;
  /** width / height */
  aspect: number;
  describe: string;
}

export const imageRules: Record<BrandingImage, ImageRule> = {
  logo: {
    format: 'png',
    minWidth: 400,
    minHeight: 160,
    aspect: 5 / 2,
    describe: 'a PNG, aspect ratio 5:2, at least 400x160 px',
  },
  square_logo: { format: 'png', minWidth: 40, minHeight: 40, aspect: 1, describe: 'a square PNG of at least 40x40 px' },
  favicon: { format: 'ico', minWidth: 40, minHeight: 40, aspect: 1, describe: 'a square ICO of at least 40x40 px' },
  signup_page_headshot: {
    format: 'png',
    minWidth: 292,
    minHeight: 400,
    aspect: 0.73,
    describe: 'a PNG, aspect ratio 0.73, at least 292x400 px',
  },
};

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Dimensions {
  width: number;
  height: number;
}

export const pngDimensions = (bytes: Buffer): Dimensions | undefined => {
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(pngSignature)) return undefined;
  if (bytes.subarray(12, 16).toString('latin1') !== 'IHDR') return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
};

/** The largest image of an ICO file (a width or height byte of 0 means 256). */
export const icoDimensions = (bytes: Buffer): Dimensions | undefined => {
  if (bytes.length < 6 || bytes.readUInt16LE(0) !== 0 || bytes.readUInt16LE(2) !== 1) return undefined;
  const count = bytes.readUInt16LE(4);
  if (count === 0 || bytes.length < 6 + count * 16) return undefined;
  let largest: Dimensions | undefined;
  for (let index = 0; index < count; index += 1) {
    const entry = 6 + index * 16;
    const width = bytes.readUInt8(entry) || 256;
    const height = bytes.readUInt8(entry + 1) || 256;
    if (!largest || width * height > largest.width * largest.height) largest = { width, height };
  }
  return largest;
};

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

const decodeBase64 = (value: string): Buffer | undefined => {
  const compact = value.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 === 1 || !base64Pattern.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
};

const problemOf = (rule: ImageRule, value: string): { problem?: string; bytes?: Buffer } => {
  const bytes = decodeBase64(value);
  if (!bytes) return { problem: 'is not valid base64' };
  if (bytes.length > maxImageBytes) return { problem: `is larger than ${maxImageBytes / 1024} KiB` };
  const size = rule.format === 'png' ? pngDimensions(bytes) : icoDimensions(bytes);
  if (!size) return { problem: `is not ${rule.format === 'png' ? 'a PNG' : 'an ICO'} image` };
  if (size.width < rule.minWidth || size.height < rule.minHeight) {
    return { problem: `is ${size.width}x${size.height} px, smaller than ${rule.minWidth}x${rule.minHeight} px` };
  }
  const aspect = size.width / size.height;
  if (Math.abs(aspect - rule.aspect) > rule.aspect * aspectTolerance) {
    return { problem: `has aspect ratio ${aspect.toFixed(3)}, expected ${rule.aspect.toFixed(3)}` };
  }
  return { bytes };
};

/** Decodes and checks the given images; every failing image is reported in one 422. */
export const checkBrandingImages = (
  images: Partial<Record<BrandingImage, string | null | undefined>>,
): Partial<Record<BrandingImage, Buffer>> => {
  const decoded: Partial<Record<BrandingImage, Buffer>> = {};
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(images) as [BrandingImage, string | null | undefined][]) {
    if (value === null || value === undefined) continue;
    const rule = imageRules[name];
    const { problem, bytes } = problemOf(rule, value);
    if (problem)
      issues.push({
        loc: ['body', name],
        msg: `The image ${problem}; expected ${rule.describe}.`,
        type: 'value_error',
      });
    else if (bytes) decoded[name] = bytes;
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return decoded;
};

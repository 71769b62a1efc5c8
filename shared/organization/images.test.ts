import { describe, expect, it } from 'vitest';
import { ValidationError } from '../kernel/errors';
import { checkBrandingImages, icoDimensions, pngDimensions } from './images';

/** Only the header bytes matter to the checks. */
const pngHeader = (width: number, height: number): Buffer => {
  const bytes = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt32BE(13, 8);
  bytes.write('IHDR', 12, 'latin1');
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
};

const icoHeader = (sizes: number[]): Buffer => {
  const bytes = Buffer.alloc(6 + sizes.length * 16);
  bytes.writeUInt16LE(1, 2);
  bytes.writeUInt16LE(sizes.length, 4);
  sizes.forEach((size, index) => {
    bytes.writeUInt8(size >= 256 ? 0 : size, 6 + index * 16);
    bytes.writeUInt8(size >= 256 ? 0 : size, 7 + index * 16);
  });
  return bytes;
};

const base64 = (bytes: Buffer) => bytes.toString('base64');

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
  return [];
};

describe('images', () => {
  it('reads PNG and ICO sizes from their headers', () => {
    expect(pngDimensions(pngHeader(400, 160))).toEqual({ width: 400, height: 160 });
    expect(pngDimensions(Buffer.from('not a png at all, really not'))).toBeUndefined();
    expect(icoDimensions(icoHeader([16, 48, 32]))).toEqual({ width: 48, height: 48 });
    expect(icoDimensions(icoHeader([0]))).toEqual({ width: 256, height: 256 });
  });

  it('accepts images of the required formats, sizes and aspect ratios', () => {
    const images = checkBrandingImages({
      logo: base64(pngHeader(500, 200)),
      square_logo: base64(pngHeader(40, 40)),
      favicon: base64(icoHeader([64])),
      signup_page_headshot: base64(pngHeader(292, 400)),
    });
    expect(Object.keys(images).sort()).toEqual(['favicon', 'logo', 'signup_page_headshot', 'square_logo']);
  });

  it('tolerates an aspect ratio off by less than 2%', () => {
    expect(issuesOf(() => checkBrandingImages({ logo: base64(pngHeader(404, 160)) }))).toEqual([]);
    expect(issuesOf(() => checkBrandingImages({ logo: base64(pngHeader(420, 160)) }))).toHaveLength(1);
  });

  it('reports every failing image with its field', () => {
    const issues = issuesOf(() =>
      checkBrandingImages({
        logo: base64(pngHeader(300, 120)),
        square_logo: base64(pngHeader(40, 60)),
        favicon: base64(pngHeader(48, 48)),
        signup_page_headshot: '%%% not base64',
      }),
    );
    expect(issues.map((issue) => issue.loc)).toEqual([
      ['body', 'logo'],
      ['body', 'square_logo'],
      ['body', 'favicon'],
      ['body', 'signup_page_headshot'],
    ]);
    expect(issues[0]?.msg).toContain('smaller than 400x160');
    expect(issues[2]?.msg).toContain('not an ICO');
  });

  it('skips images that are null or omitted', () => {
    expect(checkBrandingImages({ logo: null, favicon: undefined })).toEqual({});
  });
});

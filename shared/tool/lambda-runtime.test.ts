import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deploymentPackage, toolFunctionName } from './lambda-runtime';

const readZip = (zip: Buffer): Record<string, string> => {
  const file = join(mkdtempSync(join(tmpdir(), 'zip-')), 'package.zip');
  writeFileSync(file, zip);
  const script =
    'import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps({n: z.read(n).decode() for n in z.namelist()}))';
  return JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8' })) as Record<string, string>;
};

describe('deploymentPackage', () => {
  it('zips a bundled Node tool with its Lambda handler', () => {
    // Act
    const { zip, runtime, handler } = deploymentPackage({
      language: 'node',
      entry: 'tool.mjs',
      files: { 'tool.mjs': Buffer.from('export const handler = () => 1;').toString('base64') },
    });

    // Assess
    expect(runtime).toBe('nodejs20.x');
    expect(handler).toBe('amigo_runner.handler');
    const files = readZip(zip);
    expect(files['tool.mjs']).toBe('export const handler = () => 1;');
    expect(files['amigo_runner.mjs']).toContain("import * as tool from './tool.mjs'");
  });

  it('zips a Python tool with a handler that loads its entry', () => {
    // Act
    const { zip, runtime } = deploymentPackage({
      language: 'python',
      entry: 'pkg.main:handler',
      files: { 'pkg/main.py': Buffer.from('def handler(i, c):\n    return "x"\n').toString('base64') },
    });

    // Assess
    expect(runtime).toBe('python3.11');
    expect(readZip(zip)['amigo_runner.py']).toContain('"pkg.main:handler"');
  });
});

describe('toolFunctionName', () => {
  it('names a tool within Lambda’s 64 characters, the same way every time', () => {
    // Prepare
    process.env.TOOL_FUNCTION_PREFIX = 'classic-api-tool';

    // Act
    const name = toolFunctionName('o'.repeat(128), 'a'.repeat(24));

    // Assess
    expect(name).toMatch(/^classic-api-tool-[a-f0-9]{32}$/);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(toolFunctionName('o'.repeat(128), 'a'.repeat(24))).toBe(name);
  });
});

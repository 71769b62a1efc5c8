import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateFunctionCommand,
  type DeleteFunctionCommand,
  GetFunctionCommand,
  LambdaClient,
  UpdateFunctionCodeCommand,
} from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deploymentPackage, lambdaRuntime, toolFunctionName } from './lambda-runtime';
import { packArtifact } from './project';

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

describe('lambdaRuntime', () => {
  const conflict = Object.assign(new Error('An update is in progress for resource'), {
    name: 'ResourceConflictException',
  });
  const missing = Object.assign(new Error('Function not found'), { name: 'ResourceNotFoundException' });

  beforeEach(() => {
    process.env.TOOL_FUNCTION_PREFIX = 'classic-tool-test';
    process.env.TOOL_EXECUTION_ROLE_ARN = 'arn:aws:iam::123456789012:role/tool-execution';
    process.env.ARTIFACT_BUCKET = 'artifacts';
    const artifact = packArtifact({
      language: 'node',
      entry: 'tool.mjs',
      files: { 'tool.mjs': Buffer.from('export const handler = () => 1;').toString('base64') },
    });
    vi.spyOn(S3Client.prototype, 'send').mockImplementation(async () => ({
      Body: { transformToByteArray: async () => new Uint8Array(artifact) },
    }));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('deploys again once another deployment of the same function has settled (two tests at once)', async () => {
    // Prepare
    let creations = 0;
    const send = vi.spyOn(LambdaClient.prototype, 'send').mockImplementation(async (command: unknown) => {
      // Whether it exists, and (the waiters) whether it settled: missing until another test created it.
      if (command instanceof GetFunctionCommand) {
        if (creations === 0) throw missing;
        return { Configuration: { State: 'Active', LastUpdateStatus: 'Successful' } };
      }
      if (command instanceof CreateFunctionCommand) {
        creations += 1;
        throw conflict;
      }
      if (command instanceof UpdateFunctionCodeCommand)
        return {
          FunctionArn: `arn:aws:lambda:eu-central-1:123456789012:function:${command.input.FunctionName}:7`,
          Version: '7',
        };
      throw new Error(`unexpected ${(command as object).constructor.name}`);
    });

    // Act
    const deployed = await lambdaRuntime.deploy({ orgId: 'org-1', toolId: 'test', version: 'x', artifactKey: 'k' });

    // Assess
    expect(deployed.lambda_version).toBe(7);
    expect(send.mock.calls.filter(([command]) => command instanceof UpdateFunctionCodeCommand)).toHaveLength(1);
  });

  it('removes one version of a test function, and takes a version already gone for removed', async () => {
    // Prepare
    const send = vi
      .spyOn(LambdaClient.prototype, 'send')
      .mockImplementationOnce(async () => ({}))
      .mockImplementationOnce(async () => {
        throw missing;
      });
    const deployed = { runtime_ref: 'arn:aws:lambda:eu-central-1:123456789012:function:f:3', lambda_version: 3 };

    // Act
    await lambdaRuntime.undeploy({ orgId: 'org-1', toolId: 'test' }, deployed);
    await lambdaRuntime.undeploy({ orgId: 'org-1', toolId: 'test' }, deployed);

    // Assess
    const deletions = send.mock.calls.map(([command]) => command);
    expect(deletions).toHaveLength(2);
    expect((deletions[0] as DeleteFunctionCommand).input).toEqual({
      FunctionName: toolFunctionName('org-1', 'test'),
      Qualifier: '3',
    });
  });
});

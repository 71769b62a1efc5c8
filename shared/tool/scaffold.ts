import { gzipSync } from 'node:zlib';
import { type ProjectFiles, sampleProjects } from './sample-projects';

/**
 * The scaffold release (get-tool-scaffold-release): a gzipped tar of a ready project directory
 * for each language, made from the same sample projects a new repository is seeded with.
 */
const scaffoldReadme = `# Amigo tool scaffold

Two ready tool projects: \`greeting/\` (TypeScript, bundled with esbuild) and \`py_greeting/\`
(Python; dependencies are installed with pip only where a package index is reachable, otherwise
use the standard library and code vendored under \`vendor/\`). Each project's README says how it
declares its input schema and required environment variables.

1. Copy a project into your organization's tool repository and commit it to the default branch.
2. Create a tool: \`POST /v1/{organization}/tool/\`.
3. Add the environment variables it requires: \`POST /v1/{organization}/tool/{tool_id}/envvar\`.
4. Publish: \`POST /v1/{organization}/tool/{tool_id}/version\` with \`project_path\` and \`bump_type\`.
5. Invoke: \`POST /v1/{organization}/tool/{tool_id}/version/{version}/invoke\`.
`;

/** One ustar header block (POSIX.1-1988) for a regular file. */
const tarHeader = (path: string, size: number, mtime: number): Buffer => {
  const header = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string) => header.write(value, offset, length, 'utf8');
  const octal = (offset: number, length: number, value: number) =>
    field(offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
  field(0, 100, path);
  octal(100, 8, 0o644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, mtime);
  field(148, 8, '        ');
  field(156, 1, '0');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  field(148, 8, `${checksum.toString(8).padStart(6, '0')}\0 `);
  return header;
};

const tarGz = (files: ProjectFiles): Buffer => {
  const mtime = Math.floor(Date.UTC(2026, 0, 1) / 1000);
  const blocks = Object.entries(files).flatMap(([path, content]) => {
    const body = Buffer.from(content, 'utf8');
    return [tarHeader(path, body.length, mtime), body, Buffer.alloc((512 - (body.length % 512)) % 512)];
  });
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
};

const scaffoldFiles = (): ProjectFiles => ({
  'amigo_tool_scaffold/README.md': scaffoldReadme,
  ...Object.fromEntries(
    Object.entries(sampleProjects).flatMap(([projectPath, files]) =>
      Object.entries(files).map(([path, content]) => [
        `amigo_tool_scaffold/${projectPath.split('/').at(-1)}/${path}`,
        content,
      ]),
    ),
  ),
});

let release: Buffer | undefined;

export const scaffoldRelease = (): Buffer => {
  release ??= tarGz(scaffoldFiles());
  return release;
};

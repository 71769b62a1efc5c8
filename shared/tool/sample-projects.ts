/**
 * The sample tool projects a new tool repository is seeded with, and from which the scaffold
 * release is made: a TypeScript project at `samples/greeting` and a Python one at
 * `samples/py_greeting`. Each declares its input schema and required variables in its project
 * file (`package.json` key `amigo`, `pyproject.toml` table `[tool.amigo]`).
 */
export type ProjectFiles = Record<string, string>;

const greetingReadme = `# greeting (TypeScript tool)

A tool is a project directory in the organization's tool repository. This one is TypeScript:
the platform bundles \`src/index.ts\` (and whatever it imports) with esbuild into one module.

- \`package.json\`, key \`amigo\`: \`input_schema\` (JSON Schema of the input parameters),
  \`required_envvars\` and \`required_secret_envvars\` (names that must exist on the tool),
  \`entry\` (the module exporting \`handler\`).
- \`handler(input, context)\` returns a string (or any JSON value, sent as JSON text). \`context\`
  holds \`nonsensitive_user_variables\` and \`sensitive_user_variables\`; environment variables
  are in \`process.env\`. Throwing fails the invocation with the error's message, type and stack.
- Each run gets a fresh process and a temporary working directory; nothing is kept between runs.

Publish: commit the project to the repository, then
\`POST /v1/{organization}/tool/{tool_id}/version\` with \`{"project_path": "<directory>", "bump_type": "major"}\`.
`;

export const greetingProject: ProjectFiles = {
  'package.json': `${JSON.stringify(
    {
      name: 'greeting',
      version: '0.0.0',
      private: true,
      type: 'module',
      amigo: {
        entry: 'src/index.ts',
        input_schema: {
          type: 'object',
          properties: { name: { type: 'string', description: 'Who to greet.' } },
          required: ['name'],
          additionalProperties: false,
        },
        required_envvars: [],
        required_secret_envvars: [],
      },
    },
    null,
    2,
  )}\n`,
  'src/index.ts': `interface Context {
  nonsensitive_user_variables: Record<string, string>;
  sensitive_user_variables: Record<string, string>;
}

/** Greets someone, in the greeting the tool's GREETING variable names (if set). */
export const handler = async (input: { name: string }, context: Context): Promise<string> => {
  const greeting = process.env.GREETING ?? 'Hello';
  const nickname = context.nonsensitive_user_variables.nickname;
  return \`\${greeting}, \${input.name}\${nickname ? \` (\${nickname})\` : ''}!\`;
};
`,
  'README.md': greetingReadme,
};

export const pyGreetingProject: ProjectFiles = {
  'pyproject.toml': `[project]
name = "py_greeting"
version = "0.0.0"
requires-python = ">=3.11"
# Dependencies are installed with pip where a package index is reachable; offline, a tool may
# use only the standard library and code vendored in the project (a \`vendor/\` directory).
dependencies = []

[tool.amigo]
entry = "py_greeting.main:handler"
required_envvars = []
required_secret_envvars = []
input_schema = '''
{
  "type": "object",
  "properties": { "name": { "type": "string", "description": "Who to greet." } },
  "required": ["name"],
  "additionalProperties": false
}
'''
`,
  'py_greeting/__init__.py': '',
  'py_greeting/main.py': `import os


def handler(input_parameters, context):
    """Greets someone, in the greeting the tool's GREETING variable names (if set)."""
    greeting = os.environ.get("GREETING", "Hello")
    return f"{greeting}, {input_parameters['name']}! (from Python)"
`,
  'README.md': `# py_greeting (Python tool)

\`[tool.amigo]\` in \`pyproject.toml\` declares \`entry\` (\`module:function\`), \`input_schema\`
(JSON text) and the required variables. \`handler(input_parameters, context)\` returns a string
(or any JSON value). Dependencies are installed with pip only where a package index is
reachable; otherwise use the standard library and code vendored under \`vendor/\`.
`,
};

export const sampleProjects: Record<string, ProjectFiles> = {
  'samples/greeting': greetingProject,
  'samples/py_greeting': pyGreetingProject,
};

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { canonicalResourcePaths, matchResource } from '#shared/api/paths';
import { routeTable } from '#shared/api/route-table';
import { roundTripHeader } from '#shared/aws/round-trips';
import type { BundledFunctionSpec } from '../../infra/local/bundled-function';
import { installLambdaRuntime, lambdaContext } from '../../infra/local/lambda-runtime';
import { bareClient, measuredPaths, measurePath, type OverheadPath, perUser } from './overhead-paths';

/**
 * The function half of the overhead figures, run by `overhead.ts` as a child process whose
 * environment is the one the platform started `--bundled` gives the measured operations' function
 * (its template's, resolved to the local engines): that endpoint-group handler, loaded from its
 * asset directory in cdk.out (the bundle `cdk deploy` uploads), is invoked as Lambda invokes it, with an API Gateway REST proxy event and a context (no HTTP),
 * interleaved with the bare DynamoDB calls the operation needs, both from this one process against
 * the same DynamoDB Local. The handler's time is what
 * Lambda bills as the function's duration; the hop in front of it is API Gateway's in AWS and the
 * local gateway's here, which `overhead.ts` measures over HTTP beside it.
 *
 * Input: JSON in `BENCH_OVERHEAD_INPUT` ({ orgId, agentId, tokens }). Output: one JSON line.
 */
interface Input {
  orgId: string;
  agentId: string;
  /** Access tokens of users who have not used the measured operations yet. */
  tokens: string[];
  /** How the platform runs each endpoint group's function (`bundled-api.json`). */
  functions: Record<string, Pick<BundledFunctionSpec, 'assetDir' | 'handler'>>;
}

type BufferedHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const input = JSON.parse(process.env.BENCH_OVERHEAD_INPUT ?? '{}') as Input;
installLambdaRuntime();
const resources = canonicalResourcePaths(routeTable);

/** The event API Gateway would hand the operation's function for a GET of `path` by the token's user. */
const eventOf = (operationId: string, path: string, query: Record<string, string>, token: string) => {
  const operation = routeTable.find((candidate) => candidate.operationId === operationId);
  const resource = operation && resources.get(operation);
  const match = resource && matchResource(resource, path);
  if (!operation || !resource || !match) throw new Error(`no route for ${operationId} at ${path}`);
  const headers = { Authorization: `Bearer ${token}`, Host: 'localhost', 'X-Forwarded-Proto': 'http' };
  const event = {
    resource,
    path,
    httpMethod: operation.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])),
    pathParameters: match.pathParameters,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { path, requestId: 'bench', identity: { sourceIp: '127.0.0.1' }, domainName: 'localhost' },
  } as unknown as APIGatewayProxyEvent;
  return { group: operation.group, event };
};

/** The endpoint group's handler as deployed: the module its template names, in its asset directory. */
const deployedHandler = async (group: string): Promise<BufferedHandler> => {
  const deployed = input.functions[group];
  if (!deployed) throw new Error(`the platform runs no function for endpoint group ${group}`);
  const [module, exported] = deployed.handler.split('.') as [string, string];
  return (await import(pathToFileURL(join(deployed.assetDir, `${module}.mjs`)).href))[exported] as BufferedHandler;
};

const client = bareClient(process.env as Record<string, string>);
const figures: OverheadPath[] = [];
for (const measured of measuredPaths(client, process.env.TABLE_NAME as string, input.orgId, input.agentId)) {
  // Built before the clock starts: the event is API Gateway's work, the context the Lambda runtime's.
  const events = new Map(
    input.tokens.map((token) => [token, eventOf(measured.operationId, measured.path, measured.query, token)]),
  );
  const { group } = events.get(input.tokens[0] as string) ?? {};
  const handler = await deployedHandler(group as string);
  const contexts = Array.from({ length: input.tokens.length * perUser }, () =>
    lambdaContext(`classic-api-${group}`, 29_000),
  );
  figures.push(
    await measurePath(measured, input.tokens, async (token) => {
      const { event } = events.get(token) as { event: APIGatewayProxyEvent };
      const result = await handler(event, contexts.pop() as Context);
      if (result.statusCode !== 200) throw new Error(`${measured.operationId}: ${result.statusCode} ${result.body}`);
      return Number(result.headers?.[roundTripHeader] ?? Number.NaN);
    }),
  );
}
console.log(JSON.stringify(figures));

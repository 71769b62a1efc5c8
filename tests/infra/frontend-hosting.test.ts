import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { FrontendHosting, viewerRequestCode } from '../../infra/constructs/frontend-hosting';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';

const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

const frontendContext = {
  regions: ['eu-central-1'],
  frontendDomain: 'app.example.com',
  frontendHostedZoneId: 'Z0123456789ABCDEFGHIJ',
  frontendCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/11111111-2222-3333-4444-555555555555',
};

/** Builds the regional stacks (constructs only: nothing is synthesized). */
const build = (context: Record<string, unknown> = {}) =>
  addRegionalStacks(new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context } }));

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/**
 * The hosting on a small stand-in stack: an API and the two functions it configures. (The
 * whole platform stack is not synthesized here: its size is the platform stack tests' concern.)
 */
const standIn = () => {
  const app = new App();
  const stack = new Stack(app, 'Hosting', { env: { region: 'eu-central-1', account: '123456789012' } });
  const restApi = new RestApi(stack, 'Api', { deployOptions: { stageName: 'prod' } });
  restApi.root.addMethod('GET', new MockIntegration());
  const fn = (id: string) =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => {};'),
      description: id,
    });
  const hosting = new FrontendHosting(stack, 'Frontend', {
    settings: {
      domain: frontendContext.frontendDomain,
      hostedZoneId: frontendContext.frontendHostedZoneId,
      certificateArn: frontendContext.frontendCertificateArn,
    },
    restApi,
    stageName: 'prod',
    organizationFunction: fn('Organization'),
    appFunction: fn('App'),
  });
  return { app, stack, hosting, template: Template.fromStack(stack) };
};

const variablesOf = (template: Template, description: string): Record<string, unknown> => {
  const [found] = Object.values(
    template.findResources('AWS::Lambda::Function', { Properties: { Description: description } }) as Resources,
  );
  if (!found) throw new Error(`no function ${description}`);
  return (found.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
};

/** The viewer-request function run as CloudFront runs it, on a request for `host` and `uri`. */
const viewerRequest = (host: string | undefined, uri: string, headers: Record<string, { value: string }> = {}) => {
  const handler = new Function(`${viewerRequestCode('app.example.com')}; return handler;`)() as (event: unknown) => {
    uri?: string;
    statusCode?: number;
    headers?: Record<string, { value: string }>;
  };
  return handler({ request: { uri, headers: { ...headers, ...(host ? { host: { value: host } } : {}) } } });
};

describe('frontend hosting', () => {
  // Building the whole platform stack takes seconds, more on a busy machine.
  it('is absent without frontendDomain', { timeout: 180_000 }, () => {
    const [stack] = build({ regions: ['eu-central-1'] });
    expect(stack?.node.tryFindChild('Frontend')).toBeUndefined();
  });

  it('adds no dependency cycle to the platform stack', { timeout: 180_000 }, () => {
    // Prepare: the whole stack (the resource limit raised: its size is not this test's concern).
    const [stack] = build({ ...frontendContext, '@aws-cdk/core:stackResourceLimit': 2000 });
    const resources = Template.fromStack(stack as Stack).toJSON().Resources as Record<string, unknown>;

    // Act: each resource's references (Ref, Fn::GetAtt, DependsOn) to other resources.
    const referencesOf = (value: unknown): string[] => {
      if (Array.isArray(value)) return value.flatMap(referencesOf);
      if (value === null || typeof value !== 'object') return [];
      const entries = Object.entries(value);
      return entries.flatMap(([key, inner]) =>
        key === 'Ref' && typeof inner === 'string'
          ? [inner]
          : key === 'Fn::GetAtt' && Array.isArray(inner)
            ? [String(inner[0])]
            : key === 'DependsOn'
              ? [inner].flat().map(String)
              : referencesOf(inner),
      );
    };
    const edges = new Map(
      Object.entries(resources).map(([id, body]) => [id, referencesOf(body).filter((ref) => ref in resources)]),
    );
    const state = new Map<string, 'visiting' | 'done'>();
    const cycleFrom = (id: string): boolean => {
      if (state.get(id) === 'done') return false;
      if (state.get(id) === 'visiting') return true;
      state.set(id, 'visiting');
      const found = (edges.get(id) ?? []).some(cycleFrom);
      state.set(id, 'done');
      return found;
    };

    // Assess
    expect(Object.keys(resources).some((id) => id.startsWith('FrontendDistribution'))).toBe(true);
    expect([...edges.keys()].filter(cycleFrom)).toEqual([]);
  });

  it('serves *.{frontendDomain} through CloudFront with the certificate, nothing cached, every header but Host', () => {
    // Act
    const { template } = standIn();

    // Assess
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['*.app.example.com'],
        ViewerCertificate: Match.objectLike({
          AcmCertificateArn: frontendContext.frontendCertificateArn,
          MinimumProtocolVersion: 'TLSv1.2_2021',
        }),
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          // CachingDisabled and AllViewerExceptHostHeader (AWS managed policies).
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
          FunctionAssociations: [Match.objectLike({ EventType: 'viewer-request' })],
        }),
        Origins: [
          Match.objectLike({
            OriginPath: '/prod',
            CustomOriginConfig: Match.objectLike({ OriginProtocolPolicy: 'https-only' }),
          }),
        ],
      }),
    });
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionConfig: Match.objectLike({ Runtime: 'cloudfront-js-2.0' }),
    });
  });

  it('gives the organization function the Route 53 settings and CNAME changes in that zone only', () => {
    // Act
    const { template } = standIn();

    // Assess
    const variables = variablesOf(template, 'Organization');
    expect(variables.FRONTEND_DOMAIN).toBe('app.example.com');
    expect(variables.FRONTEND_HOSTED_ZONE_ID).toBe('Z0123456789ABCDEFGHIJ');
    expect(variables.FRONTEND_DNS_TARGET).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^FrontendDistribution/), 'DomainName'],
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'route53:ChangeResourceRecordSets',
            Resource: { 'Fn::Join': ['', Match.arrayWith([':route53:::hostedzone/Z0123456789ABCDEFGHIJ'])] },
            Condition: Match.objectLike({
              'ForAllValues:StringEquals': { 'route53:ChangeResourceRecordSetsRecordTypes': ['CNAME'] },
            }),
          }),
        ]),
      },
    });
    expect(variablesOf(template, 'App').FRONTEND_DOMAIN).toBe('app.example.com');
  });

  it('finds nothing unacknowledged by cdk-nag in the hosting', () => {
    const { app, hosting } = standIn();
    const findings = new AwsSolutionsChecks(app)
      .validateScope(hosting)
      .violations.map((violation) => `${violation.ruleName}: ${violation.description}`);
    expect(findings).toEqual([]);
  });

  it.each([
    [{ ...frontendContext, regions: ['eu-central-1', 'us-east-1'] }, /"regions"/],
    [{ ...frontendContext, frontendHostedZoneId: undefined }, /"frontendHostedZoneId"/],
    [
      {
        ...frontendContext,
        frontendCertificateArn: frontendContext.frontendCertificateArn.replace('us-east-1', 'eu-west-1'),
      },
      /"frontendCertificateArn"/,
    ],
    [{ frontendHostedZoneId: 'Z0123456789ABCDEFGHIJ' }, /"frontendHostedZoneId"/],
    [{ ...frontendContext, frontendDomain: 'App.Example.com' }, /"frontendDomain"/],
  ])('rejects incomplete or bad frontend context %j', (context, message) => {
    expect(() => build(context)).toThrow(message);
  });
});

describe('the viewer-request function', () => {
  it("maps an organization's host to the API's /app/{org} path and passes the host on", () => {
    const request = viewerRequest('acme.app.example.com', '/conversations/abc', {
      'x-app-host': { value: 'evil.example.net' },
    });
    expect(request.uri).toBe('/app/acme/conversations/abc');
    expect(request.headers?.['x-app-host']).toEqual({ value: 'acme.app.example.com' });
  });

  it.each(['app.example.com', 'a.b.app.example.com', 'acme.app.example.com.evil.net', '-x.app.example.com'])(
    'answers 404 for the host %s',
    (host) => {
      expect(viewerRequest(host, '/').statusCode).toBe(404);
    },
  );
});

import { Stack, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { appHostHeader, organizationLabel } from '#shared/app/organization-host';
import type { FrontendSettings } from '../stacks/platform-settings';

/**
 * The viewer-request function (CloudFront Functions, JavaScript 2.0): `{org}.{domain}/x` goes
 * to the API's `/{stage}/app/{org}/x` (the origin adds the stage), the host the browser asked
 * for travels in `x-app-host` (overwriting any the browser sent), and other hosts get 404.
 */
export const viewerRequestCode = (domain: string): string => `
var organizationHost = new RegExp(${JSON.stringify(`^(${organizationLabel})\\.${domain.replaceAll('.', '\\.')}$`)});
function handler(event) {
  var request = event.request;
  var host = request.headers.host ? request.headers.host.value.toLowerCase() : '';
  var match = organizationHost.exec(host);
  if (!match) return { statusCode: 404, statusDescription: 'Not Found' };
  request.headers[${JSON.stringify(appHostHeader)}] = { value: host };
  request.uri = '/app/' + match[1] + request.uri;
  return request;
}
`;

export interface FrontendHostingProps {
  settings: FrontendSettings;
  restApi: RestApi;
  /** The API's stage, as text (its resource's name would make the dependency cycle described below). */
  stageName: string;
  /** Organization create and delete add and remove `{org_id}.{domain}` records. */
  organizationFunction: LambdaFunction | undefined;
  /** Reads `FRONTEND_DOMAIN` to believe the CDN's `x-app-host`. */
  appFunction: LambdaFunction | undefined;
}

/**
 * Each organization's web app at `{org_id}.{frontend_domain}`: CloudFront with the wildcard
 * certificate in front of the API, nothing cached (every page is per user), every header but
 * Host passed on (cookies, CSRF form posts); the organization function keeps one CNAME per
 * organization pointing at the distribution.
 */
export class FrontendHosting extends Construct {
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: FrontendHostingProps) {
    super(scope, id);
    const { settings, restApi } = props;
    const stack = Stack.of(this);
    const routing = new EdgeFunction(this, 'OrganizationHost', {
      code: FunctionCode.fromInline(viewerRequestCode(settings.domain)),
      runtime: FunctionRuntime.JS_2_0,
      comment: `Maps {org}.${settings.domain} to the API's /app/{org}`,
    });
    // Built from the API's id rather than its URL: the URL names the stage, which depends on the
    // methods, which depend on the organization function, which names this distribution.
    const origin = new HttpOrigin(`${restApi.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      originPath: `/${props.stageName}`,
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Organizations' web apps at *.${settings.domain}`,
      domainNames: [`*.${settings.domain}`],
      certificate: Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn),
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        functionAssociations: [{ function: routing, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
    });
    for (const [rule, reason] of [
      ['AwsSolutions-CFR1', 'Organizations choose where their users are; the app serves them anywhere.'],
      [
        'AwsSolutions-CFR2',
        'As for the API (AwsSolutions-APIG3): stage throttling and per-user rate limits bound traffic; a WAF web ACL is an operator choice associated after deploy.',
      ],
      [
        'AwsSolutions-CFR3',
        'Standard logging needs an ACL-enabled bucket, which the platform does not keep; every request reaches API Gateway, whose access log records it.',
      ],
    ] as const)
      Validations.of(this.distribution).acknowledge({ id: rule, reason });

    const organization = props.organizationFunction;
    if (organization) {
      organization.addEnvironment('FRONTEND_DOMAIN', settings.domain);
      organization.addEnvironment('FRONTEND_HOSTED_ZONE_ID', settings.hostedZoneId);
      organization.addEnvironment('FRONTEND_DNS_TARGET', this.distribution.distributionDomainName);
      organization.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['route53:ChangeResourceRecordSets'],
          resources: [
            stack.formatArn({
              service: 'route53',
              region: '',
              account: '',
              resource: 'hostedzone',
              resourceName: settings.hostedZoneId,
            }),
          ],
          // Only CNAMEs directly under the frontend domain.
          conditions: {
            'ForAllValues:StringEquals': { 'route53:ChangeResourceRecordSetsRecordTypes': ['CNAME'] },
            'ForAllValues:StringLike': {
              'route53:ChangeResourceRecordSetsNormalizedRecordNames': [`*.${settings.domain}`],
            },
          },
        }),
      );
    }
    props.appFunction?.addEnvironment('FRONTEND_DOMAIN', settings.domain);
  }
}

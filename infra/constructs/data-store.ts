import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { type GlobalIndexDefinition, globalIndexes, projectedIndexes, tableKeys } from '#shared/data/table-definition';
import { conversationRetentionDays } from '#shared/organization/schemas';

/** Days after which generated objects expire, by key prefix. */
const objectExpiryDays = { 'prompt-logs/': 30, 'artifacts/': 90 } as const;

const accessLogExpiryDays = 365;

/** The last step of the index upgrade: the keys-only indexes alone, as a new deployment has them. */
export const lastIndexUpgradeStep = 13;

/**
 * The table's indexes at a step of the upgrade from the projected indexes of the first schema to
 * the keys-only ones (`indexUpgradeStep`), and which set the functions read. CloudFormation creates
 * or deletes one index per deployment (and does not wait for a new one to be built), so: steps 1–6
 * add a keys-only index each while the functions read the projected ones, step 7 has the functions
 * read the keys-only ones, steps 8–13 delete a projected index each. Without a step (a new
 * deployment, or one upgraded), the keys-only indexes alone.
 */
export const indexesAtUpgradeStep = (
  step: number | undefined,
): { indexes: GlobalIndexDefinition[]; readsProjected: boolean } => {
  if (step === undefined || step >= lastIndexUpgradeStep) return { indexes: globalIndexes, readsProjected: false };
  if (step <= 6) return { indexes: [...projectedIndexes, ...globalIndexes.slice(0, step)], readsProjected: true };
  return { indexes: [...projectedIndexes.slice(step - 7), ...globalIndexes], readsProjected: false };
};

/**
 * The region's stateful resources: the single table (and its stream), the artifact bucket, the
 * access-log bucket and the JWT signing key. All are retained when the stack is deleted.
 */
export class DataStore extends Construct {
  readonly table: Table;
  readonly bucket: Bucket;
  /** Where the buckets' server access logs go, each under a prefix of its own. */
  readonly accessLogs: Bucket;
  readonly signingKey: Secret;
  /** Whether the functions read the projected indexes (`TABLE_INDEXES=projected`): mid-upgrade only. */
  readonly readsProjectedIndexes: boolean;

  constructor(scope: Construct, id: string, props: { indexUpgradeStep?: number } = {}) {
    super(scope, id);

    const string = (name: string) => ({ name, type: AttributeType.STRING });
    this.table = new Table(this, 'Table', {
      partitionKey: string(tableKeys.partitionKey),
      sortKey: string(tableKeys.sortKey),
      timeToLiveAttribute: tableKeys.timeToLiveAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
      // Every change, with the item before and after: the analytics lake's feed (AnalyticsLake).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    const { indexes, readsProjected } = indexesAtUpgradeStep(props.indexUpgradeStep);
    this.readsProjectedIndexes = readsProjected;
    for (const index of indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: string(index.partitionKey),
        sortKey: string(index.sortKey),
        projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
      });
    }

    const accessLogs = new Bucket(this, 'AccessLogs', {
      // S3 server access log delivery supports only SSE-S3.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(accessLogExpiryDays) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the access-log destination; logging it into itself would loop.',
    });
    this.accessLogs = accessLogs;

    // Unversioned: objects are generated and expire, and a tenant's deletion must really delete.
    this.bucket = new Bucket(this, 'Artifacts', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'artifacts-bucket/',
      lifecycleRules: [
        ...Object.entries(objectExpiryDays).map(([prefix, days]) => ({
          id: `expire-${prefix.replace('/', '')}`,
          prefix,
          expiration: Duration.days(days),
        })),
        // A conversation's objects (voice audio, prompt logs) carry its organization's retention as a
        // tag, one rule per value of the list; its table items expire by TTL at the same age.
        ...conversationRetentionDays
          .filter((days) => days > 0)
          .map((days) => ({
            id: `expire-conversation-data-${days}d`,
            tagFilters: { 'retention-days': String(days) },
            expiration: Duration.days(days),
          })),
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.signingKey = this.seedSecret(
      'SigningKey',
      'JWT signing key material (JSON), managed by the platform functions',
      'Signing keys rotate in the application, which publishes old and new keys in the JWKS during the overlap; a Secrets Manager rotation would invalidate live tokens.',
    );
  }

  /**
   * A retained secret holding a random `seed`, with why Secrets Manager rotation stays off.
   * Secrets Manager only generates random text; the key format beyond the seed is the functions' business.
   */
  private seedSecret(id: string, description: string, noRotationReason: string): Secret {
    const secret = new Secret(this, id, {
      description,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({}),
        generateStringKey: 'seed',
        passwordLength: 64,
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: noRotationReason });
    return secret;
  }
}

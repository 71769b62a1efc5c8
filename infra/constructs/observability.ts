import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { Method, Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  type Metric,
  SearchExpression,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Alias } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  businessMetric,
  errorDimensions,
  escalationTriggerValues,
  operatorMetric,
  serviceIdDimension,
  turnLatencyMetrics,
  turnMetric,
  voiceSessionMetric,
  voiceSessionTransports,
  webhookAttemptOutcomes,
} from '#shared/aws/business-metrics';
import type { EndpointGroup, WorkerName } from '#shared/kernel/operation';
import type { WorkerQueue } from './message-queues';
import { pascalCase } from './naming';

export interface ObservabilityProps {
  stage: Stage;
  methodsByGroup: ReadonlyMap<EndpointGroup, readonly Method[]>;
  apiFunctions: ReadonlyMap<EndpointGroup, LambdaFunction>;
  queues: ReadonlyMap<WorkerName, WorkerQueue>;
  workerFunctions: ReadonlyMap<WorkerName, LambdaFunction>;
  /** Queues where other event sources leave what their consumer gave up on (the lake's stream batches), by consumer. */
  failureQueues?: ReadonlyMap<string, IQueue>;
  /** Where the functions publish their EMF metrics (POWERTOOLS_METRICS_NAMESPACE). */
  metricsNamespace: string;
  /** Subscribed to the alarm topic when given; the deployment's administrators can add other subscriptions. */
  alarmEmail?: string;
}

const period = Duration.minutes(5);
const width = 6;
const height = 6;

/**
 * Dashboard and alarms of one regional stack.
 *
 * API Gateway publishes per-method metrics only, and an endpoint group spans many
 * methods. Counts (requests, 4xx, 5xx) add up, so each group's series is a metric-math
 * SUM over its methods. Percentiles do not add up, so a group's p50/p99 latency is its
 * function's Duration: one function serves exactly one group, which makes that
 * percentile exact (it excludes the few milliseconds API Gateway adds; the API-wide
 * row shows end-to-end Latency).
 */
export class Observability extends Construct {
  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { stage } = props;
    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: Stack.of(this).stackName });
    // Every alarm notifies this topic, when it fires and when it clears.
    const alarmTopic = new Topic(this, 'AlarmTopic', {
      enforceSSL: true,
      masterKey: Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
    });
    if (props.alarmEmail) alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    new CfnOutput(Stack.of(this), 'AlarmTopicArn', { value: alarmTopic.topicArn });
    const notify = (alarm: Alarm): void => {
      alarm.addAlarmAction(new SnsAction(alarmTopic));
      alarm.addOkAction(new SnsAction(alarmTopic));
    };

    const requests = stage.metricCount({ statistic: 'Sum', period, label: 'requests' });
    const serverErrors = stage.metricServerError({ statistic: 'Sum', period, label: '5xx' });
    dashboard.addWidgets(
      new TextWidget({ markdown: '# API', width: 24, height: 1 }),
      graph('Requests', [requests]),
      graph('Errors', [stage.metricClientError({ statistic: 'Sum', period, label: '4xx' }), serverErrors]),
      graph('Latency (end to end)', [
        stage.metricLatency({ statistic: 'p50', period, label: 'p50' }),
        stage.metricLatency({ statistic: 'p99', period, label: 'p99' }),
      ]),
      graph('Integration latency', [
        stage.metricIntegrationLatency({ statistic: 'p50', period, label: 'p50' }),
        stage.metricIntegrationLatency({ statistic: 'p99', period, label: 'p99' }),
      ]),
    );

    // Business metrics carry the emitting function's `service` dimension; a search sums
    // them over every function, so the graphs follow whichever function emits them.
    const total = (metricName: string, label: string): MathExpression =>
      new MathExpression({
        expression: `SUM(SEARCH('{${props.metricsNamespace},service} MetricName="${metricName}"', 'Sum', ${period.toSeconds()}))`,
        period,
        label,
      });
    dashboard.addWidgets(
      new TextWidget({ markdown: '# Business', width: 24, height: 1 }),
      graph('Conversations started', [total(businessMetric.conversationsStarted, 'conversations')]),
      graph('Interactions', [total(businessMetric.interactions, 'interactions')]),
      graph('Analyses completed', [total(businessMetric.analysesCompleted, 'analyses')]),
      graph('Tool calls', [total(businessMetric.toolCalls, 'tool calls')]),
      graph('Version set promotions ended', [total(businessMetric.promotionsEnded, 'promotions')]),
      graph('Error responses by kind', [
        new SearchExpression({
          expression: `SEARCH('{${props.metricsNamespace},${errorDimensions.join(',')},service} MetricName="${businessMetric.errorResponses}"', 'Sum', ${period.toSeconds()})`,
          period,
        }),
      ]),
      graph('5xx responses', [total(businessMetric.serverErrorResponses, '5xx')]),
      // Webhooks: deliveries, failures (retrying and given up) and latency to the destination's 2xx.
      graph(
        'Webhook attempts',
        webhookAttemptOutcomes.map(
          (outcome) =>
            new MathExpression({
              expression: `SUM(SEARCH('{${props.metricsNamespace},outcome,service} MetricName="${businessMetric.webhookAttempts}" outcome="${outcome}"', 'Sum', ${period.toSeconds()}))`,
              period,
              label: outcome,
            }),
        ),
      ),
      graph(
        'Webhook delivery latency',
        (['p50', 'p99'] as const).map(
          (statistic) =>
            new MathExpression({
              expression: `MAX(SEARCH('{${props.metricsNamespace},service} MetricName="${businessMetric.webhookDeliveryLatency}"', '${statistic}', ${period.toSeconds()}))`,
              period,
              label: statistic,
            }),
        ),
      ),
    );

    // Turns: latency percentiles per stage, and tokens and cost. The `service_id` dimension (the
    // conversation's service) splits each search; percentiles do not add up, so each line is the
    // highest service's value.
    const turnSearch = (metricName: string, statistic: string): string =>
      `SEARCH('{${props.metricsNamespace},service,${serviceIdDimension}} MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`;
    dashboard.addWidgets(
      new TextWidget({ markdown: '# Conversation turns', width: 24, height: 1 }),
      ...turnLatencyMetrics.map((metricName) =>
        graph(
          `${metricName} (p50, p99)`,
          (['p50', 'p99'] as const).map(
            (statistic) =>
              new MathExpression({ expression: `MAX(${turnSearch(metricName, statistic)})`, period, label: statistic }),
          ),
        ),
      ),
      graph('Turn tokens', [
        new MathExpression({ expression: `SUM(${turnSearch(turnMetric.inputTokens, 'Sum')})`, period, label: 'input' }),
        new MathExpression({
          expression: `SUM(${turnSearch(turnMetric.outputTokens, 'Sum')})`,
          period,
          label: 'output',
        }),
      ]),
      graph('Turn cost (USD)', [
        new MathExpression({ expression: `SUM(${turnSearch(turnMetric.cost, 'Sum')})`, period, label: 'cost' }),
      ]),
    );

    // Operators: escalations by who asked (and those that expired unclaimed), how long conversations
    // waited for an operator, and how long operators held them.
    const search = (metricName: string, statistic: string): string =>
      `SEARCH('{${props.metricsNamespace},service} MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`;
    const percentiles = (title: string, metricName: string): GraphWidget =>
      graph(
        title,
        (['p50', 'p99'] as const).map(
          (statistic) =>
            new MathExpression({ expression: `MAX(${search(metricName, statistic)})`, period, label: statistic }),
        ),
      );
    dashboard.addWidgets(
      new TextWidget({ markdown: '# Operators', width: 24, height: 1 }),
      graph('Escalations', [
        ...escalationTriggerValues.map(
          (trigger) =>
            new MathExpression({
              expression: `SUM(SEARCH('{${props.metricsNamespace},service,trigger} MetricName="${operatorMetric.escalations}" trigger="${trigger}"', 'Sum', ${period.toSeconds()}))`,
              period,
              label: `by the ${trigger}`,
            }),
        ),
        total(operatorMetric.escalationsExpired, 'expired unclaimed'),
      ]),
      percentiles('Time to take over (ms, p50, p99)', operatorMetric.takeOverWaitMs),
      percentiles('Time under an operator (ms, p50, p99)', operatorMetric.heldMs),
    );

    // Live voice sessions (the container, `infra/constructs/voice-sessions.ts`): sessions opened
    // by transport, end of the caller's speech to the agent's first audio, barge-ins.
    const byTransport = (metricName: string) =>
      voiceSessionTransports.map(
        (transport) =>
          new MathExpression({
            expression: `SUM(SEARCH('{${props.metricsNamespace},service,transport} MetricName="${metricName}" transport="${transport}"', 'Sum', ${period.toSeconds()}))`,
            period,
            label: transport,
          }),
      );
    dashboard.addWidgets(
      new TextWidget({ markdown: '# Voice sessions', width: 24, height: 1 }),
      graph('Voice sessions opened', byTransport(voiceSessionMetric.sessions)),
      percentiles('End of speech to first audio (ms, p50, p99)', voiceSessionMetric.endOfSpeechToFirstAudioMs),
      graph('Barge-ins', byTransport(voiceSessionMetric.bargeIns)),
    );

    for (const [group, fn] of props.apiFunctions) {
      const methods = props.methodsByGroup.get(group) ?? [];
      const sum = (key: string, label: string, metricOf: (method: Method) => Metric): MathExpression =>
        sumOf(key, label, methods.map(metricOf));
      dashboard.addWidgets(
        new TextWidget({ markdown: `## Endpoint group \`${group}\``, width: 24, height: 1 }),
        graph(`${group}: requests`, [
          sum('requests', 'requests', (method) => method.metricCount(stage, { statistic: 'Sum', period })),
        ]),
        graph(`${group}: errors`, [
          sum('clientErrors', '4xx', (method) => method.metricClientError(stage, { statistic: 'Sum', period })),
          sum('serverErrors', '5xx', (method) => method.metricServerError(stage, { statistic: 'Sum', period })),
        ]),
        ...functionWidgets(group, fn),
      );
    }

    for (const [worker, { queue, deadLetterQueue }] of props.queues) {
      const fn = props.workerFunctions.get(worker);
      const deadLetters = deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period,
        label: 'dead letters',
      });
      dashboard.addWidgets(
        new TextWidget({ markdown: `## Queue \`${worker}\``, width: 24, height: 1 }),
        graph(`${worker}: backlog`, [
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: 'visible' }),
        ]),
        graph(`${worker}: oldest message (s)`, [
          queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period, label: 'age' }),
        ]),
        graph(`${worker}: dead-letter queue`, [deadLetters]),
        ...(fn ? functionWidgets(`${worker} worker`, fn) : []),
      );
      notify(
        deadLetters.createAlarm(this, `${pascalCase(worker)}DeadLetters`, {
          alarmDescription: `Messages of the ${worker} queue exhausted their retries and wait in its dead-letter queue.`,
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    for (const [consumer, failureQueue] of props.failureQueues ?? []) {
      const failures = failureQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period,
        label: 'failed batches',
      });
      dashboard.addWidgets(graph(`${consumer}: failed batches`, [failures]));
      notify(
        failures.createAlarm(this, `${pascalCase(consumer)}Failures`, {
          alarmDescription: `Batches the ${consumer} consumer failed on after every retry wait in its failure queue.`,
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    notify(
      new MathExpression({
        expression: 'errors / requests',
        usingMetrics: { errors: serverErrors, requests },
        period,
        label: '5xx rate',
      }).createAlarm(this, 'ServerErrorRate', {
        alarmDescription: 'More than 1% of API requests answered 5xx over 5 minutes.',
        threshold: 0.01,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        // No requests means no rate, not an outage.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}

const graph = (title: string, left: IMetric[]): GraphWidget => new GraphWidget({ title, left, width, height });

/**
 * Sum of per-method series; FILL keeps a quiet method from blanking the total. `key`
 * prefixes the metric ids, which must be unique within a graph.
 */
const sumOf = (key: string, label: string, metrics: Metric[]): MathExpression => {
  const usingMetrics = Object.fromEntries(metrics.map((metric, index) => [`${key}${index}`, metric]));
  const terms = Object.keys(usingMetrics).map((key) => `FILL(${key}, 0)`);
  return new MathExpression({ expression: `SUM([${terms.join(', ')}])`, usingMetrics, period, label });
};

const functionWidgets = (name: string, fn: LambdaFunction): GraphWidget[] => [
  graph(`${name}: latency`, [
    fn.metricDuration({ statistic: 'p50', period, label: 'p50' }),
    fn.metricDuration({ statistic: 'p99', period, label: 'p99' }),
  ]),
  graph(`${name}: errors and throttles`, [
    fn.metricErrors({ statistic: 'Sum', period, label: 'errors' }),
    fn.metricThrottles({ statistic: 'Sum', period, label: 'throttles' }),
  ]),
];

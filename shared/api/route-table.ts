import { adminOperations, adminStreamOperations } from '../admin/operations';
import { agentOperations } from '../agent/operations';
import { appOperations } from '../app/operations';
import { appSimulationOperations } from '../app/simulation-operations';
import { callOperations } from '../call/operations';
import { conversationOperations } from '../conversation/operations';
import { operatorOperations } from '../conversation/operator/operator-operations';
import { conversationStreamOperations } from '../conversation/stream-operations';
import { dynamicBehaviorSetOperations } from '../dynamic-behavior-set/operations';
import type { Operation } from '../kernel/operation';
import { mcpOperations } from '../mcp/operations';
import { metricOperations } from '../metric/operations';
import { organizationOperations } from '../organization/operations';
import { phoneNumberOperations } from '../phone-number/operations';
import { roleOperations } from '../role/operations';
import { serviceOperations } from '../service/operations';
import { simulationBacktestOperations } from '../simulation/backtest-operations';
import { simulationCatalogOperations } from '../simulation/operations';
import { simulationRunOperations } from '../simulation/run-operations';
import { simulationSessionOperations } from '../simulation/session-operations';
import { stateMachineOperations } from '../state-machine/operations';
import { toolOperations } from '../tool/operations';
import { userOperations } from '../user/operations';
import { webhookOperations } from '../webhook/operations';

/**
 * Every operation with its precise type, so a group's implementation can be checked by the
 * compiler against the operations of its group (`implementGroup`).
 */
export const routeOperations = [
  ...adminOperations,
  ...adminStreamOperations,
  ...agentOperations,
  ...stateMachineOperations,
  ...serviceOperations,
  ...organizationOperations,
  ...userOperations,
  ...roleOperations,
  ...conversationOperations,
  ...conversationStreamOperations,
  ...operatorOperations,
  ...dynamicBehaviorSetOperations,
  ...metricOperations,
  ...webhookOperations,
  ...toolOperations,
  ...simulationCatalogOperations,
  ...appOperations,
  ...appSimulationOperations,
  ...simulationRunOperations,
  ...phoneNumberOperations,
  ...callOperations,
  ...simulationSessionOperations,
  ...simulationBacktestOperations,
  ...mcpOperations,
] as const;

export type RouteOperation = (typeof routeOperations)[number];

/**
 * Every HTTP operation of the platform. The CDK stack, the local gateway and the
 * OpenAPI document are all generated from this list: adding an operation is one
 * entry here plus its implementation in the group's handler.
 */
export const routeTable: readonly Operation[] = routeOperations;

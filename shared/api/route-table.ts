import type { Operation } from './operation';
import { adminOperations } from './operations/admin';
import { agentOperations } from './operations/agent';
import { conversationOperations } from './operations/conversation';
import { conversationStreamOperations } from './operations/conversation-stream';
import { organizationOperations } from './operations/organization';
import { roleOperations } from './operations/role';
import { serviceOperations } from './operations/service';
import { userOperations } from './operations/user';
import { userInsightOperations } from './operations/user-insights';

/**
 * Every HTTP operation of the platform. The CDK stack, the local gateway and the
 * OpenAPI document are all generated from this list: adding an operation is one
 * entry here plus its implementation in the group's handler.
 */
export const routeTable: readonly Operation[] = [...adminOperations, ...agentOperations, ...serviceOperations, ...organizationOperations, ...userOperations, ...roleOperations, ...conversationOperations, ...conversationStreamOperations, ...userInsightOperations];

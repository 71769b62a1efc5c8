import type { Operation } from './operation';
import { adminOperations } from './operations/admin';

/**
 * Every HTTP operation of the platform. The CDK stack, the local gateway and the
 * OpenAPI document are all generated from this list: adding an operation is one
 * entry here plus its implementation in the group's handler.
 */
export const routeTable: readonly Operation[] = [...adminOperations];

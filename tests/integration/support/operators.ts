import { createUserSession, type Session } from './identity';

/**
 * Two administrators of `admin`'s organization, Dana Operator and Eli Operator: the default
 * administrator role holds Conversation:Operate (through Conversation:*).
 */
export const createOperators = (admin: Session): Promise<[Session & { email: string }, Session & { email: string }]> =>
  Promise.all([
    createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Dana', last_name: 'Operator' }),
    createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Eli', last_name: 'Operator' }),
  ]);
